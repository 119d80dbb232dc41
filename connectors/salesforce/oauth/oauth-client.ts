import { z } from 'zod';
import { redactSecrets } from '../../../src/log.js';
import type { SalesforceAppCredentials } from '../connections/connections.js';
import { requireSalesforceHost, type SalesforceHostPolicy, type SalesforceUrlRole } from '../hosts.js';
import { OAUTH_PATHS } from '../provider.js';
import { fetchBounded, SalesforceAnswerError } from './bounded-http.js';

/**
 * The two calls to Salesforce's token endpoint (`/services/oauth2/token`, form-encoded): trading an
 * authorization code and its PKCE verifier for tokens, and refreshing. Each is bounded by a timeout shorter
 * than the TokenManager's refresh lock, so a refresh cannot outlive the lock and race another process's
 * refresh with the same (rotating) refresh token. Salesforce refuses with `{error, error_description}`.
 * The base must be a Salesforce host (hosts.ts), no redirect is followed and the answer is read under a cap
 * (bounded-http.ts): the form carries the consumer secret and the code or refresh token.
 */

/** Below the TokenManager's 30-second refresh lock. */
export const TOKEN_CALL_TIMEOUT_MS = 20_000;

const refusalSchema = z.object({ error: z.string().min(1), error_description: z.string().optional() });

/** Salesforce refused the call (`error` is its OAuth error code, e.g. `invalid_grant`). */
export class SalesforceOAuthRefusal extends Error {
  readonly code = 'SALESFORCE_OAUTH_REFUSED';
  constructor(
    readonly error: string,
    readonly description: string | undefined,
    readonly status: number,
  ) {
    super(`${error}${description ? `: ${description}` : ''}`);
    this.name = 'SalesforceOAuthRefusal';
  }
}

function tokenUrl(base: string): string {
  return `${base.replace(/\/+$/, '')}${OAUTH_PATHS.token}`;
}

async function postToken(
  base: { url: string; role: SalesforceUrlRole; policy: SalesforceHostPolicy },
  form: Record<string, string>,
): Promise<unknown> {
  requireSalesforceHost(base.url, base.policy, base.role);
  let res: Awaited<ReturnType<typeof fetchBounded>>;
  try {
    res = await fetchBounded(
      tokenUrl(base.url),
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
        body: new URLSearchParams(form),
        signal: AbortSignal.timeout(TOKEN_CALL_TIMEOUT_MS),
      },
      'the Salesforce token endpoint',
    );
  } catch (err) {
    if (err instanceof SalesforceAnswerError) throw err;
    throw new Error(`the Salesforce token endpoint could not be reached: ${redactSecrets(String(err))}`, {
      cause: err,
    });
  }
  const text = res.text;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (res.ok && body !== undefined) return body;
  const refusal = refusalSchema.safeParse(body);
  if (refusal.success) {
    throw new SalesforceOAuthRefusal(refusal.data.error, refusal.data.error_description, res.status);
  }
  throw new Error(`the Salesforce token endpoint answered ${res.status} without an OAuth body`);
}

export function exchangeAuthorizationCode(
  app: SalesforceAppCredentials,
  input: { code: string; codeVerifier: string; redirectUri: string },
  policy: SalesforceHostPolicy,
): Promise<unknown> {
  return postToken(
    { url: app.loginUrl, role: 'login URL', policy },
    {
      grant_type: 'authorization_code',
      code: input.code,
      code_verifier: input.codeVerifier,
      redirect_uri: input.redirectUri,
      client_id: app.clientId,
      client_secret: app.clientSecret,
    },
  );
}

/** `base`: the org's own My Domain (its instance URL), which serves production and sandboxes alike. */
export function refreshAccessToken(
  app: SalesforceAppCredentials,
  base: { url: string; role: SalesforceUrlRole },
  refreshToken: string,
  policy: SalesforceHostPolicy,
): Promise<unknown> {
  return postToken(
    { ...base, policy },
    {
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: app.clientId,
      client_secret: app.clientSecret,
    },
  );
}
