import { randomUUID } from 'node:crypto';
import { Redis as IORedis, type Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import {
  closeRedis,
  createRedis,
  deleteByPattern,
  deleteKeysWithPrefix,
  type RedisRole,
  waitForRedis,
} from '../../src/redis.js';
import { REDIS_URL } from './redis-url.js';

/**
 * A test file's connection to the real Redis and a fresh key prefix per test: registers the hooks that open the
 * connection and, at the end, delete every key under the prefixes handed out and close it.
 */
export function redisWithFreshPrefixes(tag: string): { redis: () => Redis; freshPrefix: () => string } {
  let redis: Redis | undefined;
  const prefixes: string[] = [];
  beforeAll(async () => {
    redis = createRedis(REDIS_URL, 'producer');
    await waitForRedis(redis);
  });
  afterAll(async () => {
    if (!redis) return;
    for (const p of prefixes) await deleteByPattern(redis, `${p}:*`);
    await closeRedis(redis);
  });
  return {
    redis: () => {
      if (!redis) throw new Error('Redis is opened in beforeAll');
      return redis;
    },
    freshPrefix: () => {
      const prefix = `rc-test-${tag}-${randomUUID().slice(0, 8)}`;
      prefixes.push(prefix);
      return prefix;
    },
  };
}

/**
 * One key prefix for a whole test file and a connection to the real Redis opened at once; at the end every key
 * under the prefix is deleted and the connection closed. With a `role`, the connection is the one the app opens
 * for it (its options and error handling), for code that relies on them.
 */
export function redisUnderOwnPrefix(role?: RedisRole): { prefix: string; redis: Redis } {
  const prefix = `rc-test-${randomUUID().slice(0, 8)}`;
  const redis = role ? createRedis(REDIS_URL, role) : new IORedis(REDIS_URL);
  afterAll(async () => {
    await deleteKeysWithPrefix(REDIS_URL, prefix);
    if (role) await closeRedis(redis);
    else redis.disconnect();
  });
  return { prefix, redis };
}
