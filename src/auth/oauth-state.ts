import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { cookieValue, serializeCookie } from '../util/cookies.js';
import { DecryptionError, SecretBox } from '../util/secretbox.js';

/**
 * OAuth `state` without server storage. `/install` hands the browser two halves: the `state` query parameter
 * (a random nonce and its HMAC) and an HttpOnly, SameSite=Lax cookie holding the nonce, the expiry and the
 * provider's private data (the PKCE code verifier) sealed with a key derived from ENCRYPTION_KEY. The callback
 * accepts a state only beside the cookie that was issued with it, so the flow is bound to the browser that
 * started it, and an anonymous install request writes nothing to Redis: a flood of them costs only CPU and the
 * per-address limit.
 *
 * Single use: the callback clears the cookie, and the authorization code itself is single use at the CRM. A
 * replay of a callback URL needs the victim's cookie and a code the CRM has not yet redeemed.
 */

export type OAuthStateFailure =
  | 'missing'
  | 'malformed'
  | 'bad_signature'
  | 'other_browser'
  | 'expired_or_used'
  | 'wrong_provider';

export class OAuthStateError extends Error {
  readonly code = 'OAUTH_STATE_INVALID';
  constructor(readonly reason: OAuthStateFailure) {
    super(
      {
        missing: 'the state parameter is missing',
        malformed: 'the state parameter is malformed',
        bad_signature: 'the state parameter was not issued by this app',
        other_browser:
          'the install was not started in this browser, or it was already finished or started again: start the install again',
        expired_or_used: 'the install link expired or was already used: start the install again',
        wrong_provider: 'the state parameter belongs to another provider',
      }[reason],
    );
    this.name = 'OAuthStateError';
  }
}

const sealedStateSchema = z.object({
  provider: z.string(),
  nonce: z.string(),
  expiresAt: z.number(),
  data: z.record(z.string(), z.string()),
});

export interface IssuedOAuthState {
  /** The `state` query parameter for the authorize URL. */
  state: string;
  /** A `Set-Cookie` header value: the browser's half. */
  cookie: string;
}

export interface OAuthStateOptions {
  /** Cookies get `Secure` when the app is served over https. */
  secureCookies: boolean;
  ttlSeconds?: number;
  now?: () => number;
}

/** The cookie's name and path per provider: each provider's callback reads only its own. */
export function oauthStateCookieName(provider: string): string {
  return `rc_oauth_${provider}`;
}

export function oauthStateCookiePath(provider: string): string {
  return `/oauth/${provider}`;
}

export class OAuthStateStore {
  private readonly signKey: Buffer;
  private readonly box: SecretBox;
  private readonly ttlSeconds: number;
  private readonly now: () => number;

  constructor(
    encryptionKey: Buffer,
    private readonly options: OAuthStateOptions,
  ) {
    // Separate keys per purpose: nothing signed or sealed here can be replayed as a stored token or a session.
    this.signKey = createHmac('sha256', encryptionKey).update('oauth-state.sign').digest();
    this.box = new SecretBox(createHmac('sha256', encryptionKey).update('oauth-state.seal').digest());
    this.ttlSeconds = options.ttlSeconds ?? 600;
    this.now = options.now ?? Date.now;
  }

  private sign(nonce: string, provider: string): string {
    return createHmac('sha256', this.signKey).update(`${nonce}.${provider}`).digest('base64url');
  }

  issue(provider: string, data: Record<string, string> = {}): IssuedOAuthState {
    const nonce = randomBytes(18).toString('base64url');
    const sealed = this.box.seal(
      JSON.stringify({ provider, nonce, expiresAt: this.now() + this.ttlSeconds * 1000, data }),
      oauthStateCookieName(provider),
    );
    return {
      state: `${nonce}.${provider}.${this.sign(nonce, provider)}`,
      cookie: this.cookie(provider, sealed, this.ttlSeconds),
    };
  }

  /** The `Set-Cookie` value that removes the provider's state cookie (sent by every callback answer). */
  clearedCookie(provider: string): string {
    return this.cookie(provider, '', 0);
  }

  /**
   * The private data issued with `state`, when `state` was issued by this app for `provider` and arrives with the
   * cookie issued beside it. Throws OAuthStateError saying which check failed.
   */
  consume(provider: string, state: unknown, cookieHeader: string | undefined): Record<string, string> {
    if (typeof state !== 'string' || state.length === 0) throw new OAuthStateError('missing');
    const [nonce, issuedFor, signature, ...rest] = state.split('.');
    if (!nonce || !issuedFor || !signature || rest.length > 0) throw new OAuthStateError('malformed');
    if (!equalText(this.sign(nonce, issuedFor), signature)) throw new OAuthStateError('bad_signature');
    // Signed by this app for another provider: the admin followed the other app's callback.
    if (issuedFor !== provider) throw new OAuthStateError('wrong_provider');
    const sealed = cookieValue(cookieHeader, oauthStateCookieName(provider));
    if (!sealed) throw new OAuthStateError('other_browser');
    let opened: z.infer<typeof sealedStateSchema>;
    try {
      opened = sealedStateSchema.parse(JSON.parse(this.box.open(sealed, oauthStateCookieName(provider))));
    } catch (err) {
      if (err instanceof DecryptionError || err instanceof SyntaxError || err instanceof z.ZodError) {
        throw new OAuthStateError('other_browser');
      }
      throw err;
    }
    if (opened.provider !== provider) throw new OAuthStateError('wrong_provider');
    if (!equalText(opened.nonce, nonce)) throw new OAuthStateError('other_browser');
    if (opened.expiresAt <= this.now()) throw new OAuthStateError('expired_or_used');
    return opened.data;
  }

  private cookie(provider: string, value: string, maxAgeSeconds: number): string {
    return serializeCookie(oauthStateCookieName(provider), value, {
      path: oauthStateCookiePath(provider),
      maxAgeSeconds,
      httpOnly: true,
      // Lax, not Strict: the CRM sends the browser back with a top-level GET from its own site.
      sameSite: 'Lax',
      secure: this.options.secureCookies,
    });
  }
}

function equalText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
