import { z } from 'zod';
import type { TimedMemo } from '../../../src/util/timed-memo.js';
import type { Priority, SalesforceApi } from '../api/api-client.js';
import { ACCOUNT_SOBJECT, PERSON_ACCOUNT_FIELD } from '../provider.js';
import { ACCOUNT_COUNTRY_CODE_FIELDS } from './records.js';

/**
 * What an org's Account looks like, from one describe: whether State and Country/Territory Picklists are on
 * (`BillingCountryCode` exists) and whether Person Accounts are on (`IsPersonAccount` exists; Salesforce adds
 * that field only to orgs that enabled them). Asked once an hour per org (the org's memory, org-memory.ts), not
 * once per connector (connectors are made every few seconds); a failed describe is asked again by the next call.
 */

export interface AccountShape {
  countryCodes: boolean;
  personAccounts: boolean;
}

const accountDescribeSchema = z.object({ fields: z.array(z.object({ name: z.string() })) });

/** The Account's field names as the org describes them now (one describe, not kept). */
export async function accountFieldNames(api: SalesforceApi, priority: Priority): Promise<Set<string>> {
  const raw = await api.rest<unknown>(priority, {
    method: 'GET',
    url: `/sobjects/${ACCOUNT_SOBJECT}/describe`,
  });
  return new Set(accountDescribeSchema.parse(raw).fields.map((f) => f.name));
}

export function accountShape(
  api: SalesforceApi,
  priority: Priority,
  shapes: TimedMemo<AccountShape>,
  orgKey: string,
): Promise<AccountShape> {
  return shapes.get(orgKey, async (): Promise<AccountShape> => {
    const names = await accountFieldNames(api, priority);
    return {
      countryCodes: ACCOUNT_COUNTRY_CODE_FIELDS.every((f) => names.has(f)),
      personAccounts: names.has(PERSON_ACCOUNT_FIELD),
    };
  });
}
