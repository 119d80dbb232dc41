import type { RedisClient } from './redis.js';

/**
 * Whether Redis can answer now, and what to say when it cannot. Request handlers never wait for Redis to come
 * back: the fail-fast connection refuses commands while it reconnects, a hung Redis is cut off by the
 * connection's command timeout, and the probes race their own short timeouts.
 */

export const REDIS_UNAVAILABLE_CODE = 'REDIS_UNAVAILABLE';
export const REDIS_UNAVAILABLE_MESSAGE =
  'Redis is unreachable, so the connector cannot do this now. It reconnects by itself: try again in a moment.';

/** The connection is up; false while it connects or reconnects. */
export function redisReady(redis: RedisClient): boolean {
  return redis.status === 'ready';
}

// ioredis's own words for "no connection" (offline queue off, socket closed, retries spent, command timeout),
// and a Redis Cluster's while a master fails over (slots not served, redirections spent, slot map unreadable).
const UNAVAILABLE_MESSAGES =
  /Stream isn't writeable|Connection is closed|max retries per request|Command timed out|ECONNREFUSED|ECONNRESET|ETIMEDOUT|CLUSTERDOWN|TRYAGAIN|Too many Cluster redirections|Failed to refresh slots cache|None of startup nodes is available|Cluster isn't ready/i;

/** A failure caused by Redis being away rather than by the request or by our code. */
export function isRedisUnavailable(err: unknown, redis: RedisClient): boolean {
  if (!redisReady(redis)) return true;
  // A route's own deadline (webhook-deadline.ts): what it waited on was Redis.
  if (err instanceof TimedOutError) return true;
  return err instanceof Error && UNAVAILABLE_MESSAGES.test(err.message);
}

export class TimedOutError extends Error {
  readonly code = 'TIMED_OUT';
  constructor(what: string, ms: number) {
    super(`${what} did not answer within ${ms} ms`);
    this.name = 'TimedOutError';
  }
}

/** `promise`, or a TimedOutError after `ms`; the timer never keeps the process alive. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimedOutError(what, ms)), ms);
    timer.unref();
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
