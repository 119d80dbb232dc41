import { z } from 'zod';
import { CrmBadRequestError, CrmForbiddenError } from '../../../src/crm/errors.js';
import type { SalesforceApi } from '../api/api-client.js';
import { soqlQuote } from '../api/soql.js';
import { describeFailure } from '../errors.js';
import { ERROR_CODES } from '../provider.js';

/**
 * Selects Account for Change Data Capture on the standard `ChangeEvents` channel, as Setup > Change Data Capture
 * does: a PlatformEventChannelMember created through the Tooling API (the Metadata API's createMetadata() does
 * not take that type, and the SFDX project's deploy is what an org installed by OAuth never runs). Safe to run
 * again: a selection found by the Tooling query, or refused as a duplicate, is kept. An org that refuses it (its
 * allocation of selected entities is used up, or the user lacks "Customize Application") stays on the poll: the
 * answer is a sentence for the admin, never an install failure.
 */

export const ACCOUNT_CHANGE_MEMBER = {
  channel: 'ChangeEvents',
  entity: 'AccountChangeEvent',
  /** The standard channel's members are named ChannelName_EventName. */
  fullName: 'ChangeEvents_AccountChangeEvent',
} as const;

const DUPLICATE_CODES: ReadonlySet<string> = new Set([
  ERROR_CODES.duplicateValue,
  'DUPLICATE_DEVELOPER_NAME',
]);

/** A refusal a person must resolve (ensure-fields.ts's isRefusal, which imports this module). */
function isRefusal(err: unknown): err is Error {
  return err instanceof CrmBadRequestError || err instanceof CrmForbiddenError;
}

const memberQuerySchema = z.object({ records: z.array(z.object({ Id: z.string() })).default([]) });

/** Null when Account is selected (already or now); otherwise why not, in words for the admin. */
export async function selectAccountForChangeEvents(api: SalesforceApi): Promise<string | null> {
  if (await alreadySelected(api)) return null;
  try {
    await api.rest('urgent', {
      method: 'POST',
      url: '/tooling/sobjects/PlatformEventChannelMember',
      body: {
        FullName: ACCOUNT_CHANGE_MEMBER.fullName,
        Metadata: {
          eventChannel: ACCOUNT_CHANGE_MEMBER.channel,
          selectedEntity: ACCOUNT_CHANGE_MEMBER.entity,
        },
      },
    });
    return null;
  } catch (err) {
    const failure = describeFailure(err instanceof Error && err.cause ? err.cause : err);
    if (failure && DUPLICATE_CODES.has(failure.code)) return null;
    if (!isRefusal(err)) throw err;
    return (
      `Account could not be selected for Change Data Capture (${err.message}): Account changes arrive by ` +
      'the poll. An admin can select Account in Setup > Change Data Capture (an org selects at most five ' +
      'objects without the add-on license).'
    );
  }
}

/** The Tooling query needs "View Setup and Configuration": an org that refuses it is asked to create instead. */
async function alreadySelected(api: SalesforceApi): Promise<boolean> {
  const q = `SELECT Id FROM PlatformEventChannelMember WHERE DeveloperName = ${soqlQuote(ACCOUNT_CHANGE_MEMBER.fullName)}`;
  try {
    const found = memberQuerySchema.safeParse(
      await api.rest<unknown>('urgent', { method: 'GET', url: `/tooling/query?q=${encodeURIComponent(q)}` }),
    );
    return found.success && found.data.records.length > 0;
  } catch (err) {
    if (!isRefusal(err)) throw err;
    return false;
  }
}
