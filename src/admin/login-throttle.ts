import { Keys } from '../pipeline/keys.js';
import type { RedisClient } from '../redis.js';

/** Failed logins allowed per client address in one window; a guessing script is slowed to a crawl. */
export const LOGIN_FAILURES_PER_WINDOW = 10;
export const LOGIN_WINDOW_MS = 15 * 60 * 1000;

/**
 * Counts failed presentations of the admin token per client address in a fixed window, shared by every
 * process on one Redis: the login form, `Authorization: Bearer` and forged session cookies all count here, so
 * no way in is cheaper to guess through than another.
 */
export class LoginThrottle {
  private readonly keys: Keys;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
  ) {
    this.keys = new Keys(prefix);
  }

  private key(client: string): string {
    return this.keys.adminLoginFailures(client);
  }

  async isBlocked(client: string): Promise<boolean> {
    const count = Number((await this.redis.get(this.key(client))) ?? 0);
    return count >= LOGIN_FAILURES_PER_WINDOW;
  }

  /** Seconds until a blocked address may try again (0 when it is not blocked), for `Retry-After`. */
  async retryAfterSeconds(client: string): Promise<number> {
    const [count, ttl] = await Promise.all([
      this.redis.get(this.key(client)),
      this.redis.pttl(this.key(client)),
    ]);
    if (Number(count ?? 0) < LOGIN_FAILURES_PER_WINDOW) return 0;
    return Math.max(1, Math.ceil((ttl > 0 ? ttl : LOGIN_WINDOW_MS) / 1000));
  }

  async recordFailure(client: string): Promise<void> {
    const key = this.key(client);
    // The window starts with the first failure (NX): later failures count in it without extending it.
    await this.redis.multi().set(key, '0', 'PX', LOGIN_WINDOW_MS, 'NX').incr(key).exec();
  }

  async reset(client: string): Promise<void> {
    await this.redis.del(this.key(client));
  }
}
