import { CrmRevocationError } from '../../../src/crm/errors.js';
import type { RevokeInput } from '../../../src/crm/provider.js';
import { redactSecrets } from '../../../src/log.js';
import type { SalesforceSettings } from '../config.js';
import type { SalesforceConnectionStore } from '../connections/connections.js';
import { hostPolicyOf, requireSalesforceHost, SalesforceHostRefusedError } from '../hosts.js';
import { SALESFORCE_PROVIDER } from '../provider.js';
import { fetchBounded, SalesforceAnswerError } from './bounded-http.js';

/**
 * Removing a Salesforce installation revokes its refresh token at `/services/oauth2/revoke`, which revokes every
 * access token issued from it too (Salesforce's "Revoke OAuth Tokens"). The org's own My Domain URL is asked
 * first (the instance URL the token response named), as Salesforce recommends, else the login URL of the
 * connection it was installed through (or the global one); 400 `invalid_token` means the org no longer knew
 * the token. The call takes the token alone: no consumer key or secret. The token goes to a Salesforce host only
 * (hosts.ts), no redirect is followed and the answer is capped (bounded-http.ts).
 */

export const SALESFORCE_REVOKE_PATH = '/services/oauth2/revoke';

const WHAT_TO_DO =
  "Revoke the app's access in Salesforce (Setup > Connected Apps OAuth Usage, or the integration user's OAuth Connected Apps).";

export async function revokeSalesforceInstall(
  settings: SalesforceSettings,
  input: RevokeInput,
  connections?: SalesforceConnectionStore,
): Promise<'revoked' | 'already_revoked'> {
  const token = input.tokens.refreshToken ?? input.tokens.accessToken;
  const connectionId = input.installation.connectionId;
  const connection = connectionId && connections ? await connections.get(connectionId) : null;
  const base = input.installation.instanceUrl ?? connection?.loginUrl ?? settings.salesforce.loginUrl;
  let res: Awaited<ReturnType<typeof fetchBounded>>;
  try {
    requireSalesforceHost(
      base,
      hostPolicyOf(settings),
      input.installation.instanceUrl ? 'instance URL' : 'login URL',
    );
    res = await fetchBounded(
      `${base.replace(/\/+$/, '')}${SALESFORCE_REVOKE_PATH}`,
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token }),
        signal: input.signal,
      },
      'the Salesforce revoke endpoint',
    );
  } catch (err) {
    if (err instanceof SalesforceHostRefusedError || err instanceof SalesforceAnswerError) {
      throw new CrmRevocationError(
        `the app's tokens were not revoked: ${err.message}`,
        SALESFORCE_PROVIDER,
        WHAT_TO_DO,
        err instanceof SalesforceAnswerError ? err.status : undefined,
        { cause: err },
      );
    }
    throw new CrmRevocationError(
      `Salesforce could not be reached to revoke the app's tokens: ${redactSecrets(String(err))}`,
      SALESFORCE_PROVIDER,
      WHAT_TO_DO,
      undefined,
      { cause: err },
    );
  }
  const text = res.text;
  if (res.ok) return 'revoked';
  if (res.status === 400 && /invalid_token/.test(text)) return 'already_revoked';
  throw new CrmRevocationError(
    `Salesforce refused to revoke the app's tokens (${res.status})`,
    SALESFORCE_PROVIDER,
    WHAT_TO_DO,
    res.status,
  );
}
