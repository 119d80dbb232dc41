import { Redis, type RedisOptions } from 'ioredis';
import { Keys } from './pipeline/keys.js';

/**
 * Redis connections. BullMQ workers need `maxRetriesPerRequest: null` (a blocked command must wait out a
 * restart, not fail); producers and request handlers fail fast instead (`enableOfflineQueue: false`) so a
 * webhook can answer 503 while Redis is away rather than hang.
 */

export type RedisRole = 'worker' | 'producer';

export function redisOptions(role: RedisRole): RedisOptions {
  const common: RedisOptions = {
    // Reconnect forever with a capped delay: `serve` and `worker` must survive a Redis restart.
    retryStrategy: (attempt) => Math.min(200 * attempt, 2_000),
    lazyConnect: false,
  };
  return role === 'worker'
    ? { ...common, maxRetriesPerRequest: null, enableReadyCheck: true }
    : { ...common, maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 5_000 };
}

export function createRedis(url: string, role: RedisRole, name?: string): Redis {
  const client = new Redis(url, { ...redisOptions(role), ...(name ? { connectionName: name } : {}) });
  // An 'error' listener keeps ioredis from printing every reconnect attempt as an unhandled error; the
  // caller's readiness check and job failures report the outage instead.
  client.on('error', () => {});
  return client;
}

/** Waits until the client is ready, or throws after `timeoutMs`. */
export async function waitForRedis(client: Redis, timeoutMs = 5_000): Promise<void> {
  if (client.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`Redis did not answer within ${timeoutMs} ms`));
    }, timeoutMs);
    const onReady = () => {
      cleanup();
      resolve();
    };
    const cleanup = () => {
      clearTimeout(timer);
      client.off('ready', onReady);
    };
    client.on('ready', onReady);
  });
}

export async function closeRedis(...clients: Redis[]): Promise<void> {
  await Promise.all(
    clients.map(async (c) => {
      try {
        await c.quit();
      } catch {
        c.disconnect();
      }
    }),
  );
}

/** Deletes every key matching `pattern` (SCAN + UNLINK, so a large keyspace never blocks Redis). */
export async function deleteByPattern(client: Redis, pattern: string): Promise<number> {
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) deleted += await client.unlink(...keys);
  } while (cursor !== '0');
  return deleted;
}

/** Opens a short-lived connection and deletes every key under `${prefix}:`; returns how many were deleted. */
export async function deleteKeysWithPrefix(redisUrl: string, prefix: string): Promise<number> {
  const client = createRedis(redisUrl, 'worker', `${prefix}-cleanup`);
  try {
    return await deleteByPattern(client, new Keys(prefix).everything());
  } finally {
    await closeRedis(client);
  }
}
