import type { Redis } from 'ioredis';
import { Keys } from '../pipeline/keys.js';

/** Failed logins allowed per client address in one window; a guessing script is slowed to a crawl. */
export const LOGIN_FAILURES_PER_WINDOW = 10;
export const LOGIN_WINDOW_MS = 15 * 60 * 1000;

/** Counts failed admin logins per client address in a fixed window, shared by every process on one Redis. */
export class LoginThrottle {
  private readonly keys: Keys;

  constructor(
    private readonly redis: Redis,
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

  async recordFailure(client: string): Promise<void> {
    const key = this.key(client);
    // The window starts with the first failure (NX): later failures count in it without extending it.
    await this.redis.multi().set(key, '0', 'PX', LOGIN_WINDOW_MS, 'NX').incr(key).exec();
  }

  async reset(client: string): Promise<void> {
    await this.redis.del(this.key(client));
  }
}
