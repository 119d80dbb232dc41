import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { Keys } from '../pipeline/keys.js';

/**
 * OAuth `state`: signed (so a forged value is refused before Redis is touched), single-use (GETDEL) and
 * expiring (Redis TTL). Server-side data such as the PKCE code verifier stays in Redis, never in the URL.
 */

export class OAuthStateError extends Error {
  readonly code = 'OAUTH_STATE_INVALID';
  constructor(
    readonly reason: 'missing' | 'malformed' | 'bad_signature' | 'expired_or_used' | 'wrong_provider',
  ) {
    super(
      {
        missing: 'the state parameter is missing',
        malformed: 'the state parameter is malformed',
        bad_signature: 'the state parameter was not issued by this app',
        expired_or_used: 'the install link expired or was already used: start the install again',
        wrong_provider: 'the state parameter belongs to another provider',
      }[reason],
    );
    this.name = 'OAuthStateError';
  }
}

const stateRecordSchema = z.object({
  provider: z.string(),
  data: z.record(z.string(), z.string()),
});

export class OAuthStateStore {
  private readonly keys: Keys;

  constructor(
    private readonly redis: Redis,
    private readonly signingKey: Buffer,
    prefix = 'rc',
    private readonly ttlSeconds = 600,
  ) {
    this.keys = new Keys(prefix);
  }

  private sign(nonce: string): string {
    return createHmac('sha256', this.signingKey).update(`oauth-state.${nonce}`).digest('base64url');
  }

  async issue(provider: string, data: Record<string, string> = {}): Promise<string> {
    const nonce = randomBytes(18).toString('base64url');
    await this.redis.set(
      this.keys.oauthState(nonce),
      JSON.stringify({ provider, data }),
      'EX',
      this.ttlSeconds,
    );
    return `${nonce}.${this.sign(nonce)}`;
  }

  async consume(provider: string, state: unknown): Promise<Record<string, string>> {
    if (typeof state !== 'string' || state.length === 0) throw new OAuthStateError('missing');
    const [nonce, signature, ...rest] = state.split('.');
    if (!nonce || !signature || rest.length > 0) throw new OAuthStateError('malformed');
    const expected = Buffer.from(this.sign(nonce));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
      throw new OAuthStateError('bad_signature');
    }
    const raw = await this.redis.getdel(this.keys.oauthState(nonce));
    if (!raw) throw new OAuthStateError('expired_or_used');
    const record = stateRecordSchema.parse(JSON.parse(raw));
    if (record.provider !== provider) throw new OAuthStateError('wrong_provider');
    return record.data;
  }
}
