import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { serializeCookie } from '../util/cookies.js';

/**
 * The admin page's credentials: the ADMIN_TOKEN itself, or a named admin's token from ADMIN_TOKENS (bearer
 * requests and the login form), and a stateless session cookie signed with a key derived from ENCRYPTION_KEY
 * (a named admin's carries the name). The admin token's hash salts the derivation, so
 * changing ADMIN_TOKEN ends every session. CSRF tokens are an HMAC of the session id under a second derived key:
 * nothing to store, and a token from one session is worthless in another.
 */

export const SESSION_COOKIE = 'rc_admin_session';
/** Read by bull-board's HTTP client (axios), which sends it back as `X-XSRF-TOKEN` on same-origin requests. */
export const XSRF_COOKIE = 'XSRF-TOKEN';
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
export const ADMIN_COOKIE_PATH = '/admin';
export const BULL_BOARD_PATH = '/admin/queues';

/** An unnamed admin's session (ADMIN_TOKEN): `v1.<id>.<expiry>.<mac>`, as issued before named admins. */
const SESSION_VERSION = 'v1';
/** A named admin's session (ADMIN_TOKENS): `v2.<id>.<expiry>.<name>.<mac>`. */
const NAMED_SESSION_VERSION = 'v2';
const NAME = /^[A-Za-z0-9_-]{1,32}$/;

export interface AdminSession {
  id: string;
  expiresAt: number;
  /** The admin's name when they signed in with a named token. */
  name?: string;
}

export interface AdminAuthOptions {
  adminToken: string;
  /** Named admins (ADMIN_TOKENS); changing them ends every session, as changing ADMIN_TOKEN does. */
  adminTokens?: readonly { name: string; token: string }[];
  encryptionKey: Buffer;
  /** Cookies get `Secure` when the app is served over https. */
  secureCookies: boolean;
  now?: () => number;
}

export class AdminAuth {
  private readonly sessionKey: Buffer;
  private readonly csrfKey: Buffer;
  private readonly tokenDigest: Buffer;
  private readonly named: readonly { name: string; digest: Buffer }[];
  private readonly now: () => number;
  readonly secureCookies: boolean;

  constructor(options: AdminAuthOptions) {
    this.tokenDigest = sha256(options.adminToken);
    const named = options.adminTokens ?? [];
    this.named = named.map((n) => ({ name: n.name, digest: sha256(n.token) }));
    // Without named admins the salt is ADMIN_TOKEN's hash alone, as before them: sessions survive the upgrade.
    const salt =
      named.length === 0
        ? this.tokenDigest
        : sha256([options.adminToken, ...named.map((n) => `${n.name}:${n.token}`).sort()].join('\n'));
    this.sessionKey = derive(options.encryptionKey, salt, 'report-connector admin session');
    this.csrfKey = derive(options.encryptionKey, salt, 'report-connector admin csrf');
    this.secureCookies = options.secureCookies;
    this.now = options.now ?? Date.now;
  }

  /** Constant time whatever the candidate's length: both sides are hashed to 32 bytes first. */
  tokenMatches(candidate: string): boolean {
    return this.adminFor(candidate) !== null;
  }

  /**
   * Who a token is: a named admin (`{name}`), the unnamed ADMIN_TOKEN (`{name: null}`), or nobody (null).
   * Every token is compared, in constant time each, so the time taken does not tell which matched.
   */
  adminFor(candidate: string): { name: string | null } | null {
    const digest = sha256(candidate);
    let found: { name: string | null } | null = null;
    for (const n of this.named) {
      if (timingSafeEqual(digest, n.digest) && found === null) found = { name: n.name };
    }
    const unnamed = timingSafeEqual(digest, this.tokenDigest);
    return found ?? (unnamed ? { name: null } : null);
  }

  issueSession(name: string | null = null): { session: AdminSession; cookieValue: string } {
    const id = randomBytes(18).toString('base64url');
    const expiresAt = this.now() + SESSION_TTL_MS;
    if (name !== null && NAME.test(name)) {
      const body = `${NAMED_SESSION_VERSION}.${id}.${expiresAt.toString(36)}.${name}`;
      return { session: { id, expiresAt, name }, cookieValue: `${body}.${this.mac(this.sessionKey, body)}` };
    }
    const body = `${SESSION_VERSION}.${id}.${expiresAt.toString(36)}`;
    return { session: { id, expiresAt }, cookieValue: `${body}.${this.mac(this.sessionKey, body)}` };
  }

  /** The session a cookie value stands for, or null when it is forged, malformed or expired. */
  readSession(cookieValue: string | undefined): AdminSession | null {
    const read = this.inspectSession(cookieValue);
    return typeof read === 'string' ? null : read;
  }

  /**
   * Like readSession, but says why a cookie is no session: `forged` (malformed or a wrong MAC: a guess, which
   * the throttle counts) or `expired` (once ours: a browser left open, not a guess).
   */
  inspectSession(cookieValue: string | undefined): AdminSession | 'absent' | 'forged' | 'expired' {
    if (!cookieValue) return 'absent';
    const parts = cookieValue.split('.');
    const named = parts.length === 5 && parts[0] === NAMED_SESSION_VERSION;
    if (!named && (parts.length !== 4 || parts[0] !== SESSION_VERSION)) return 'forged';
    const [, id, expiry] = parts as [string, string, string];
    const name = named ? parts[3]! : null;
    const mac = parts[parts.length - 1]!;
    if (!/^[A-Za-z0-9_-]{24}$/.test(id) || !/^[0-9a-z]{1,12}$/.test(expiry)) return 'forged';
    if (name !== null && !NAME.test(name)) return 'forged';
    const body = parts.slice(0, -1).join('.');
    if (!equalText(mac, this.mac(this.sessionKey, body))) return 'forged';
    const expiresAt = Number.parseInt(expiry, 36);
    if (!Number.isSafeInteger(expiresAt) || expiresAt <= this.now()) return 'expired';
    return name === null ? { id, expiresAt } : { id, expiresAt, name };
  }

  csrfTokenFor(session: AdminSession): string {
    return this.mac(this.csrfKey, session.id);
  }

  csrfMatches(session: AdminSession, candidate: string | undefined): boolean {
    if (!candidate) return false;
    return equalText(candidate, this.csrfTokenFor(session));
  }

  sessionCookie(cookieValue: string, session: AdminSession): string {
    const maxAge = Math.max(0, Math.floor((session.expiresAt - this.now()) / 1000));
    return this.cookie(SESSION_COOKIE, cookieValue, { path: ADMIN_COOKIE_PATH, maxAge, httpOnly: true });
  }

  /** The CSRF token as a cookie bull-board's own scripts can read; useless to another site (SameSite, CSP). */
  xsrfCookie(session: AdminSession): string {
    const maxAge = Math.max(0, Math.floor((session.expiresAt - this.now()) / 1000));
    return this.cookie(XSRF_COOKIE, this.csrfTokenFor(session), {
      path: BULL_BOARD_PATH,
      maxAge,
      httpOnly: false,
    });
  }

  clearedCookies(): string[] {
    return [
      this.cookie(SESSION_COOKIE, '', { path: ADMIN_COOKIE_PATH, maxAge: 0, httpOnly: true }),
      this.cookie(XSRF_COOKIE, '', { path: BULL_BOARD_PATH, maxAge: 0, httpOnly: false }),
    ];
  }

  private cookie(
    name: string,
    value: string,
    o: { path: string; maxAge: number; httpOnly: boolean },
  ): string {
    return serializeCookie(name, value, {
      path: o.path,
      maxAgeSeconds: o.maxAge,
      httpOnly: o.httpOnly,
      sameSite: 'Strict',
      secure: this.secureCookies,
    });
  }

  private mac(key: Buffer, text: string): string {
    return createHmac('sha256', key).update(text).digest('base64url');
  }
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

function derive(secret: Buffer, salt: Buffer, info: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, salt, info, 32));
}

function equalText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
