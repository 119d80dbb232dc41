import { z } from 'zod';
import { CrmBadRequestError, CrmUnauthorizedError } from '../../../src/crm/errors.js';
import type { Installation, InstallationStore } from '../../../src/installations/store.js';
import { CALL_OPTIONS, jsforce } from '../api/api-client.js';
import type { SalesforceSettings } from '../config.js';
import { describeFailure, toCrmError } from '../errors.js';
import { ERROR_CODES, SALESFORCE_KIND, SALESFORCE_PROVIDER } from '../provider.js';

/**
 * Token mode: SALESFORCE_INSTANCE_URL + SALESFORCE_ACCESS_TOKEN make one installation without OAuth. The org id
 * (the installation's identity) comes from one cheap SOQL call on Organization, which the `api` scope allows.
 * Returns null when token mode is not configured. Safe on every start: the installation is upserted.
 */

const organizationSchema = z.object({ records: z.array(z.object({ Id: z.string() })).min(1) });

export async function ensureSalesforceTokenInstallation(
  cfg: SalesforceSettings,
  store: InstallationStore,
): Promise<Installation | null> {
  const { instanceUrl, accessToken, apiVersion } = cfg.salesforce;
  if (!instanceUrl || !accessToken) return null;
  const conn = new (jsforce().Connection)({
    instanceUrl,
    accessToken,
    version: apiVersion,
    callOptions: CALL_OPTIONS,
  });
  let raw: unknown;
  try {
    raw = await conn.request(`/query?q=${encodeURIComponent('SELECT Id FROM Organization')}`);
  } catch (err) {
    const failure = describeFailure(err);
    if (!failure) throw err;
    if (failure.code === ERROR_CODES.invalidSession || failure.status === 401) {
      throw new CrmUnauthorizedError(
        `SALESFORCE_ACCESS_TOKEN was refused by ${instanceUrl} (${failure.message}): set a current access token`,
        SALESFORCE_PROVIDER,
        401,
        { cause: err },
      );
    }
    throw toCrmError(failure, err);
  }
  const parsed = organizationSchema.safeParse(raw);
  if (!parsed.success) {
    throw new CrmBadRequestError(
      `${instanceUrl} did not answer the Organization query as Salesforce does`,
      SALESFORCE_PROVIDER,
    );
  }
  return store.upsert({
    crm: SALESFORCE_KIND,
    externalId: parsed.data.records[0]!.Id,
    mode: 'token',
    tokens: { accessToken },
    instanceUrl,
  });
}
