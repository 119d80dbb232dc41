import { randomBytes } from 'node:crypto';
import { HUBSPOT_NOTE_SCOPES, HUBSPOT_SCOPES } from '../provider.js';

/** The local private app was made with the note scope too, so alert notes work in the demo. */
const PRIVATE_APP_SCOPES = [...HUBSPOT_SCOPES, ...HUBSPOT_NOTE_SCOPES];

/**
 * The stand-in's OAuth state: authorization codes it issued (single use, bound to a redirect URI), access
 * tokens that expire after a configurable time, and refresh tokens that can be revoked.
 */

export interface TokenRegistryOptions {
  clientId: string;
  clientSecret: string;
  portalId: string;
  accessTokenTtlMs: number;
  rotateRefreshTokens: boolean;
  privateAppToken: string | undefined;
  now: () => number;
}

export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
  expiresInSeconds: number;
  scopes: string[];
}

export type TokenCheck =
  | { ok: true; scopes: readonly string[]; kind: 'oauth' | 'private' }
  | { ok: false; expiredAgoMs?: number };

export type GrantFailure = 'bad_client' | 'bad_code' | 'bad_redirect_uri' | 'bad_refresh_token';

/** Who a token was issued to: the HubSpot user who signed in at the consent screen, and their portal. */
export interface LocalTokenUser {
  userId: string;
  email: string;
  hubId: string;
}

function token(prefix: string): string {
  return `${prefix}-${randomBytes(24).toString('base64url')}`;
}

export class LocalTokenRegistry {
  private readonly codes = new Map<
    string,
    { redirectUri: string | undefined; scopes: string[]; user: LocalTokenUser | undefined }
  >();
  private readonly access = new Map<
    string,
    { expiresAt: number; scopes: string[]; user?: LocalTokenUser | undefined }
  >();
  private readonly refresh = new Map<
    string,
    { scopes: string[]; revoked: boolean; user?: LocalTokenUser | undefined }
  >();

  constructor(private readonly options: TokenRegistryOptions) {}

  issueAuthCode(
    input: { redirectUri?: string; scopes?: readonly string[]; user?: LocalTokenUser } = {},
  ): string {
    const code = token('local-code');
    this.codes.set(code, {
      redirectUri: input.redirectUri,
      scopes: [...(input.scopes ?? HUBSPOT_SCOPES)],
      user: input.user,
    });
    return code;
  }

  knowsClient(clientId: string): boolean {
    return clientId === this.options.clientId;
  }

  clientMatches(clientId: string | undefined, clientSecret: string | undefined): boolean {
    return clientId === this.options.clientId && clientSecret === this.options.clientSecret;
  }

  exchangeCode(code: string | undefined, redirectUri: string | undefined): IssuedTokens | GrantFailure {
    const issued = code ? this.codes.get(code) : undefined;
    if (!code || !issued) return 'bad_code';
    this.codes.delete(code);
    if (issued.redirectUri !== undefined && issued.redirectUri !== redirectUri) return 'bad_redirect_uri';
    const refreshToken = token('local-rt');
    this.refresh.set(refreshToken, { scopes: issued.scopes, revoked: false, user: issued.user });
    return this.issueAccess(refreshToken, issued.scopes, issued.user);
  }

  refreshAccess(refreshToken: string | undefined): IssuedTokens | GrantFailure {
    const entry = refreshToken ? this.refresh.get(refreshToken) : undefined;
    if (!refreshToken || !entry || entry.revoked) return 'bad_refresh_token';
    let next = refreshToken;
    if (this.options.rotateRefreshTokens) {
      entry.revoked = true;
      next = token('local-rt');
      this.refresh.set(next, { scopes: entry.scopes, revoked: false, user: entry.user });
    }
    return this.issueAccess(next, entry.scopes, entry.user);
  }

  /**
   * `client_credentials`: an app token for the webhooks journal, with journal scopes and, for the object types
   * its subscriptions cover, their read scopes (HubSpot's journal guide asks for both).
   */
  clientCredentials(
    scope: string | undefined,
  ): { accessToken: string; expiresInSeconds: number } | 'bad_scope' {
    const scopes = (scope ?? '').split(/\s+/).filter(Boolean);
    const allowed = (s: string) =>
      s.startsWith('developer.webhooks_journal.') || /^crm\.objects\.[a-z_]+\.read$/.test(s);
    if (!scopes.some((s) => s.startsWith('developer.webhooks_journal.')) || !scopes.every(allowed))
      return 'bad_scope';
    const accessToken = token('local-cc');
    this.access.set(accessToken, { expiresAt: this.options.now() + 30 * 60_000, scopes });
    return { accessToken, expiresInSeconds: 1800 };
  }

  private issueAccess(
    refreshToken: string,
    scopes: string[],
    user: LocalTokenUser | undefined,
  ): IssuedTokens {
    const accessToken = token('local-at');
    this.access.set(accessToken, {
      expiresAt: this.options.now() + this.options.accessTokenTtlMs,
      scopes,
      user,
    });
    return {
      accessToken,
      refreshToken,
      expiresInSeconds: Math.max(1, Math.round(this.options.accessTokenTtlMs / 1000)),
      scopes,
    };
  }

  check(accessToken: string | undefined): TokenCheck {
    if (!accessToken) return { ok: false };
    if (this.options.privateAppToken && accessToken === this.options.privateAppToken) {
      return { ok: true, scopes: PRIVATE_APP_SCOPES, kind: 'private' };
    }
    const entry = this.access.get(accessToken);
    if (!entry) return { ok: false };
    const now = this.options.now();
    if (entry.expiresAt <= now) return { ok: false, expiredAgoMs: now - entry.expiresAt };
    return { ok: true, scopes: entry.scopes, kind: 'oauth' };
  }

  introspect(tokenValue: string | undefined): {
    active: boolean;
    scopes?: string[];
    expiresAt?: number;
    user?: LocalTokenUser | undefined;
  } {
    const entry = tokenValue ? this.access.get(tokenValue) : undefined;
    if (!entry || entry.expiresAt <= this.options.now()) return { active: false };
    return { active: true, scopes: entry.scopes, expiresAt: entry.expiresAt, user: entry.user };
  }

  /** Every refresh token stops working (the app was uninstalled). */
  revokeRefreshTokens(): void {
    for (const entry of this.refresh.values()) entry.revoked = true;
  }

  /** `token/revoke`: false when the refresh token is unknown or already revoked. */
  revokeRefreshToken(refreshToken: string | undefined): boolean {
    const entry = refreshToken ? this.refresh.get(refreshToken) : undefined;
    if (!entry || entry.revoked) return false;
    entry.revoked = true;
    return true;
  }

  /** The app was uninstalled from the portal: no OAuth token of it works any more. */
  uninstall(): void {
    this.revokeRefreshTokens();
    this.expireAccessTokens();
  }

  /** Every access token issued so far is expired from now on. */
  expireAccessTokens(): void {
    const past = this.options.now() - 1;
    for (const entry of this.access.values()) entry.expiresAt = past;
  }

  get portalId(): string {
    return this.options.portalId;
  }
}
