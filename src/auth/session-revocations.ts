import type { RedisClient } from '../redis.js';
import { Keys } from '../storage/keys.js';

/**
 * Sessions ended by "Log out" before their expiry. The cookie itself is stateless, so a copied cookie would
 * otherwise stay valid until it expires; each entry lives exactly as long as the session it cancels.
 */
export class SessionRevocations {
  private readonly keys: Keys;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
  ) {
    this.keys = new Keys(prefix);
  }

  private key(sessionId: string): string {
    return this.keys.adminRevokedSession(sessionId);
  }

  async revoke(sessionId: string, expiresAt: number): Promise<void> {
    const ttl = expiresAt - Date.now();
    if (ttl > 0) await this.redis.set(this.key(sessionId), '1', 'PX', ttl);
  }

  async isRevoked(sessionId: string): Promise<boolean> {
    return (await this.redis.exists(this.key(sessionId))) === 1;
  }
}
