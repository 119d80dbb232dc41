import { z } from 'zod';
import { RefreshRejectedError, type TokenRefresher } from '../../../src/auth/token-manager.js';
import type { StoredTokens } from '../../../src/installations/store.js';
import { redactSecrets } from '../../../src/log.js';
import { HubSpotOAuthError } from '../errors.js';
import {
  HUBSPOT_BAD_REFRESH,
  HUBSPOT_DEFAULT_API_VERSION,
  type HubSpotApiVersion,
  hubspotPaths,
} from '../provider.js';

/**
 * HubSpot's date-versioned OAuth endpoints (`/oauth/<version>/token`, `/oauth/<version>/token/introspect`).
 * The SDK (v14) only speaks the v1 token endpoint, so these are plain `fetch` calls against the same base URL.
 * Every parameter goes in a form-encoded body, never in the query string, which keeps the client secret and
 * tokens out of access logs. The form bodies are built in `tokenForm` only.
 */

export interface HubSpotOAuthClientConfig {
  /** `HUBSPOT_API_URL`. */
  apiUrl: string;
  /** `HUBSPOT_API_VERSION`. */
  apiVersion?: HubSpotApiVersion;
  clientId: string;
  clientSecret: string;
  now?: () => number;
}

export interface HubSpotTokenGrant {
  tokens: StoredTokens;
  /** The portal the tokens belong to, when the response says (`hub_id`). */
  hubId: string | undefined;
}

const tokenResponseSchema = z.looseObject({
  access_token: z.string().min(1),
  refresh_token: z.string().min(1).optional(),
  expires_in: z.coerce.number().positive(),
  token_type: z.string().optional(),
  hub_id: z.union([z.number(), z.string()]).optional(),
});

/** The form body of each call to the token endpoints, in one place. */
export function tokenForm(
  cfg: Pick<HubSpotOAuthClientConfig, 'clientId' | 'clientSecret'>,
  grant:
    | { kind: 'authorization_code'; code: string; redirectUri: string }
    | { kind: 'refresh_token'; refreshToken: string }
    | { kind: 'introspect'; accessToken: string }
    | { kind: 'revoke'; refreshToken: string },
): Record<string, string> {
  const client = { client_id: cfg.clientId, client_secret: cfg.clientSecret };
  switch (grant.kind) {
    case 'authorization_code':
      return {
        grant_type: 'authorization_code',
        ...client,
        redirect_uri: grant.redirectUri,
        code: grant.code,
      };
    case 'refresh_token':
      return { grant_type: 'refresh_token', ...client, refresh_token: grant.refreshToken };
    case 'introspect':
      return { ...client, token: grant.accessToken, token_type_hint: 'access_token' };
    case 'revoke':
      return { ...client, token: grant.refreshToken, token_type_hint: 'refresh_token' };
  }
}

function pathsOf(cfg: HubSpotOAuthClientConfig) {
  return hubspotPaths(cfg.apiVersion ?? HUBSPOT_DEFAULT_API_VERSION);
}

const introspectionSchema = z.looseObject({
  active: z.boolean(),
  hub_id: z.union([z.number(), z.string()]).optional(),
  /** The id and email of the user the token was issued to, and the portal's domain, when HubSpot includes them. */
  user_id: z.union([z.number(), z.string()]).optional(),
  user: z.string().optional(),
  hub_domain: z.string().optional(),
  scopes: z.array(z.string()).optional(),
});

const oauthErrorSchema = z.looseObject({
  error: z.string().optional(),
  error_description: z.string().optional(),
  status: z.string().optional(),
  message: z.string().optional(),
});

async function postForm(
  cfg: HubSpotOAuthClientConfig,
  path: string,
  params: Record<string, string>,
): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(`${cfg.apiUrl}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
      body: new URLSearchParams(params),
    });
  } catch (err) {
    throw new HubSpotOAuthError(
      `HubSpot's token endpoint could not be reached: ${String(err)}`,
      undefined,
      undefined,
      undefined,
      {
        cause: err,
      },
    );
  }
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text === '' ? null : JSON.parse(text);
  } catch {
    // Not JSON (an HTML error page, say): the status below says what matters.
  }
  if (!res.ok) {
    const e = oauthErrorSchema.safeParse(body);
    const detail = e.success
      ? [e.data.error, e.data.status, e.data.error_description ?? e.data.message].filter(Boolean).join(': ')
      : '';
    throw new HubSpotOAuthError(
      redactSecrets(`HubSpot's token endpoint answered ${res.status}${detail ? ` (${detail})` : ''}`),
      res.status,
      e.success ? e.data.error : undefined,
      e.success ? e.data.status : undefined,
    );
  }
  return body;
}

function toGrant(cfg: HubSpotOAuthClientConfig, body: unknown): HubSpotTokenGrant {
  const parsed = tokenResponseSchema.safeParse(body);
  if (!parsed.success) {
    throw new HubSpotOAuthError("HubSpot's token response had no usable access token", 200);
  }
  const t = parsed.data;
  const now = (cfg.now ?? Date.now)();
  const tokens: StoredTokens = { accessToken: t.access_token, expiresAt: now + t.expires_in * 1000 };
  if (t.refresh_token) tokens.refreshToken = t.refresh_token;
  return { tokens, hubId: t.hub_id === undefined ? undefined : String(t.hub_id) };
}

/** Exchanges the authorization code from the install callback. */
export async function exchangeHubSpotCode(
  cfg: HubSpotOAuthClientConfig,
  code: string,
  redirectUri: string,
): Promise<HubSpotTokenGrant> {
  const body = await postForm(
    cfg,
    pathsOf(cfg).token,
    tokenForm(cfg, { kind: 'authorization_code', code, redirectUri }),
  );
  return toGrant(cfg, body);
}

export async function refreshHubSpotTokens(
  cfg: HubSpotOAuthClientConfig,
  refreshToken: string,
): Promise<HubSpotTokenGrant> {
  const body = await postForm(
    cfg,
    pathsOf(cfg).token,
    tokenForm(cfg, { kind: 'refresh_token', refreshToken }),
  );
  return toGrant(cfg, body);
}

/** What HubSpot's introspection says of an access token. */
export interface HubSpotTokenInfo {
  active: boolean;
  /** The portal the token belongs to. */
  hubId: string | undefined;
  /** The HubSpot user the token was issued to (the one who went through the consent screen). */
  userId: string | undefined;
  scopes: string[];
  user?: string;
  hubDomain?: string;
}

/**
 * Asks HubSpot about an access token: the fallback for a token response without `hub_id`, and who a card
 * user's sign-in token was issued to.
 */
export async function introspectHubSpotToken(
  cfg: HubSpotOAuthClientConfig,
  accessToken: string,
): Promise<HubSpotTokenInfo> {
  const body = await postForm(
    cfg,
    pathsOf(cfg).introspect,
    tokenForm(cfg, { kind: 'introspect', accessToken }),
  );
  const parsed = introspectionSchema.safeParse(body);
  if (!parsed.success) throw new HubSpotOAuthError("HubSpot's introspection answer could not be read", 200);
  const { hub_id: hubId, user_id: userId } = parsed.data;
  return {
    active: parsed.data.active,
    hubId: hubId === undefined ? undefined : String(hubId),
    userId: userId === undefined ? undefined : String(userId),
    scopes: parsed.data.scopes ?? [],
    ...(parsed.data.user ? { user: parsed.data.user } : {}),
    ...(parsed.data.hub_domain ? { hubDomain: parsed.data.hub_domain } : {}),
  };
}

export function isBadRefreshToken(err: HubSpotOAuthError): boolean {
  return (
    err.refused &&
    (err.providerError === HUBSPOT_BAD_REFRESH.error || err.providerStatus === HUBSPOT_BAD_REFRESH.status)
  );
}

/**
 * The `TokenRefresher` for `TokenManager`: a refused refresh token becomes `RefreshRejectedError` (the
 * installation is then disconnected instead of retried); whatever refresh token HubSpot returns is stored,
 * since whether HubSpot rotates them is not documented (TokenManager keeps the old one when none comes back).
 */
export function createHubSpotTokenRefresher(cfg: HubSpotOAuthClientConfig): TokenRefresher {
  return async (tokens) => {
    if (!tokens.refreshToken)
      throw new RefreshRejectedError('no refresh token is stored', 'NO_REFRESH_TOKEN');
    try {
      const grant = await refreshHubSpotTokens(cfg, tokens.refreshToken);
      return grant.tokens;
    } catch (err) {
      if (err instanceof HubSpotOAuthError && isBadRefreshToken(err)) {
        throw new RefreshRejectedError(err.message, err.providerStatus ?? err.providerError);
      }
      throw err;
    }
  };
}
