import { z } from 'zod';
import type { EnsureFieldsResult } from '../../../src/crm/connector.js';
import { CrmBadRequestError, CrmForbiddenError, CrmUnauthorizedError } from '../../../src/crm/errors.js';
import type { Logger } from '../../../src/log.js';
import type { SalesforceApi } from '../api/api-client.js';
import { soqlQuote } from '../api/soql.js';
import { describeFailure } from '../errors.js';
import {
  ACCOUNT_SOBJECT,
  ERROR_CODES,
  METADATA_BATCH_SIZE,
  OAUTH_PATHS,
  PERMISSION_SET,
  SALESFORCE_PROVIDER,
} from '../provider.js';
import { selectAccountForChangeEvents } from './change-event-selection.js';
import { SALESFORCE_FIELDS } from './field-names.js';
import { customFieldDefinition, salesforceShape, shapeMatches } from './field-types.js';
import { allPermissionSetDefinitions } from './permission-sets.js';

/**
 * Install-time setup, safe to run again: read the connector's Account fields with the Metadata API, upsert
 * only those missing or of the wrong shape (a metadata deploy is slow and needless for a field that is
 * already right), upsert the permission sets (the integration user's, with read and edit on them, and
 * Report_Viewer and Report_Editor for people), and assign the integration user's to it. With change events on,
 * select Account for Change Data Capture too (change-event-selection.ts): an org that refuses it is a note, not
 * a problem, since the poll serves it. Every call is urgent: installing must work even while background work
 * is paused.
 */

const readFieldSchema = z
  .object({ fullName: z.string().nullish(), type: z.string().nullish() })
  .catchall(z.unknown());

const saveResultSchema = z.object({
  fullName: z.string().nullish(),
  success: z.boolean(),
  created: z.boolean().nullish(),
  errors: z
    .array(z.object({ message: z.string().nullish(), statusCode: z.string().nullish() }))
    .nullish()
    .transform((v) => v ?? []),
});

const userInfoSchema = z.object({ user_id: z.string() });
const chatterUserSchema = z.object({ id: z.string() });
const idRowSchema = z.object({ Id: z.string() });

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** A refusal a person must resolve; anything retryable or auth-related propagates to the caller instead. */
export function isRefusal(err: unknown): err is Error {
  return err instanceof CrmBadRequestError || err instanceof CrmForbiddenError;
}

function asArray(value: unknown): unknown[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}

export async function ensureSalesforceFields(
  api: SalesforceApi,
  options: { logger?: Logger; changeEvents?: boolean } = {},
): Promise<EnsureFieldsResult> {
  const result: EnsureFieldsResult = { created: [], existing: [], reconciled: [], problems: [] };
  try {
    await upsertFields(api, result);
    await upsertPermissionSets(api, result);
    await assignPermissionSet(api, result);
    const refused = options.changeEvents ? await selectAccountForChangeEvents(api) : null;
    if (refused) result.notes = [refused];
  } catch (err) {
    if (err instanceof CrmForbiddenError) {
      throw new CrmForbiddenError(
        `${err.message}. Creating the connector's Account fields needs a user with "Customize Application" and ` +
          '"Modify Metadata"; reinstall as such a user, or have an admin deploy manifests/salesforce, which ' +
          'holds the fields, the permission sets and the External Client App ' +
          '(sf project deploy start --manifest manifest/package.xml; see its README).',
        SALESFORCE_PROVIDER,
        403,
        { cause: err },
      );
    }
    throw err;
  }
  options.logger?.info({ ...result }, 'salesforce fields ensured');
  return result;
}

async function upsertFields(api: SalesforceApi, result: EnsureFieldsResult): Promise<void> {
  const byFullName = new Map(SALESFORCE_FIELDS.map((f) => [`${ACCOUNT_SOBJECT}.${f.salesforce}`, f]));
  const existing = new Map<string, z.infer<typeof readFieldSchema>>();
  for (const names of chunks([...byFullName.keys()], METADATA_BATCH_SIZE)) {
    const read = await api.run('urgent', 'metadata: read fields', (conn) =>
      conn.metadata.read('CustomField', names),
    );
    for (const raw of asArray(read)) {
      const parsed = readFieldSchema.safeParse(raw);
      if (parsed.success && parsed.data.fullName) existing.set(parsed.data.fullName, parsed.data);
    }
  }

  const toWrite = [...byFullName.entries()].filter(([fullName, field]) => {
    const current = existing.get(fullName);
    if (current && shapeMatches(salesforceShape(field), current)) {
      result.existing.push(field.salesforce);
      return false;
    }
    return true;
  });

  for (const batch of chunks(toWrite, METADATA_BATCH_SIZE)) {
    const definitions = batch.map(([, field]) => customFieldDefinition(field, 'metadataApi'));
    const saved = await api.run('urgent', 'metadata: upsert fields', (conn) =>
      conn.metadata.upsert('CustomField', definitions),
    );
    const answers = asArray(saved).map((raw) => saveResultSchema.parse(raw));
    batch.forEach(([fullName, field], i) => {
      const answer = answers.find((a) => a.fullName === fullName) ?? answers[i];
      if (!answer) {
        result.problems.push(`${field.salesforce}: the Metadata API did not report on this field`);
      } else if (!answer.success) {
        const why = answer.errors.map((e) => `${e.statusCode ?? 'ERROR'}: ${e.message ?? ''}`).join('; ');
        result.problems.push(`${field.salesforce}: ${why || 'the Metadata API refused it'}`);
      } else if (existing.has(fullName)) {
        result.reconciled.push(field.salesforce);
      } else {
        result.created.push(field.salesforce);
      }
    });
  }
}

/**
 * The integration user's permission set and the two for people (Report_Viewer, Report_Editor), in one call:
 * an org installed by OAuth never deploys the SFDX project, so this is how its admins get sets to assign.
 */
async function upsertPermissionSets(api: SalesforceApi, result: EnsureFieldsResult): Promise<void> {
  const definitions = allPermissionSetDefinitions();
  const saved = await api.run('urgent', 'metadata: upsert permission sets', (conn) =>
    conn.metadata.upsert('PermissionSet', definitions),
  );
  const answers = asArray(saved).map((raw) => saveResultSchema.parse(raw));
  definitions.forEach((ps, i) => {
    const answer = answers.find((a) => a.fullName === ps.fullName) ?? answers[i];
    if (answer?.success) return;
    const why = answer?.errors.map((e) => `${e.statusCode ?? 'ERROR'}: ${e.message ?? ''}`).join('; ');
    result.problems.push(`permission set ${ps.fullName}: ${why || 'the Metadata API refused it'}`);
  });
}

/**
 * The user the tokens belong to. The Connect API's `users/me` is covered by the `api` scope; the OpenID
 * userinfo endpoint is the fallback for orgs with Chatter turned off (it may refuse a token without the `id`
 * scope, and may do so with a 401, which is why it is not asked first).
 */
export async function integrationUserId(api: SalesforceApi): Promise<string | { reason: string }> {
  const reasons: string[] = [];
  try {
    return chatterUserSchema.parse(
      await api.rest<unknown>('urgent', { method: 'GET', url: '/chatter/users/me' }),
    ).id;
  } catch (err) {
    if (!isRefusal(err) && !(err instanceof z.ZodError)) throw err;
    reasons.push(`chatter/users/me: ${err.message}`);
  }
  try {
    return userInfoSchema.parse(
      await api.rest<unknown>('urgent', { method: 'GET', url: OAUTH_PATHS.userinfo }),
    ).user_id;
  } catch (err) {
    // users/me answered (with a refusal), so the session is valid: a 401 here is about scope, not the token.
    if (!isRefusal(err) && !(err instanceof z.ZodError) && !(err instanceof CrmUnauthorizedError)) throw err;
    reasons.push(`userinfo: ${err.message}`);
  }
  return { reason: reasons.join('; ') };
}

async function assignPermissionSet(api: SalesforceApi, result: EnsureFieldsResult): Promise<void> {
  const manual = `assign the permission set ${PERMISSION_SET.name} to the integration user by hand`;
  const found = await api.rest<{ records: unknown[] }>('urgent', {
    method: 'GET',
    url: `/query?q=${encodeURIComponent(`SELECT Id FROM PermissionSet WHERE Name = ${soqlQuote(PERMISSION_SET.name)}`)}`,
  });
  const permissionSet = idRowSchema.safeParse(found.records?.[0]);
  if (!permissionSet.success) {
    result.problems.push(`permission set ${PERMISSION_SET.name} was not found after saving it: ${manual}`);
    return;
  }

  const userId = await integrationUserId(api);
  if (typeof userId !== 'string') {
    result.problems.push(`the integration user could not be identified (${userId.reason}): ${manual}`);
    return;
  }

  try {
    await api.rest('urgent', {
      method: 'POST',
      url: '/sobjects/PermissionSetAssignment',
      body: { AssigneeId: userId, PermissionSetId: permissionSet.data.Id },
    });
  } catch (err) {
    const failure = describeFailure(err instanceof Error && err.cause ? err.cause : err);
    // Already assigned: Salesforce refuses the second assignment as a duplicate.
    if (failure?.code === ERROR_CODES.duplicateValue) return;
    if (!isRefusal(err)) throw err;
    result.problems.push(`assigning ${PERMISSION_SET.name} failed (${err.message}): ${manual}`);
  }
}
