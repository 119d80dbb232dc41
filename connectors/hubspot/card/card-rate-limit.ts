import type { RedisClient } from '../../../src/redis.js';
import type { Keys } from '../../../src/storage/keys.js';
import { HUBSPOT_PROVIDER } from '../provider.js';

/**
 * The card routes' budget: CARD_REQUESTS_PER_MINUTE per portal in a fixed one-minute window, counted in Redis so
 * every process of the connector shares it. A portal over it gets 429 with `Retry-After` until the window ends.
 */

export const CARD_REQUESTS_PER_MINUTE = 30;
export const CARD_WINDOW_MS = 60_000;

export type CardBudget = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export class CardRateLimit {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly perMinute = CARD_REQUESTS_PER_MINUTE,
    private readonly windowMs = CARD_WINDOW_MS,
  ) {}

  /** Counts one request of the portal and says whether it is within the budget. */
  async take(portalId: string): Promise<CardBudget> {
    const key = this.keys.cardRequests(HUBSPOT_PROVIDER, portalId);
    // The window starts with its first request (NX) and is not extended by the ones that follow.
    const replies = await this.redis
      .multi()
      .set(key, '0', 'PX', this.windowMs, 'NX')
      .incr(key)
      .pttl(key)
      .exec();
    const count = Number(replies?.[1]?.[1] ?? 0);
    if (count <= this.perMinute) return { allowed: true };
    const ttl = Number(replies?.[2]?.[1] ?? this.windowMs);
    return {
      allowed: false,
      retryAfterSeconds: Math.max(1, Math.ceil((ttl > 0 ? ttl : this.windowMs) / 1000)),
    };
  }
}
