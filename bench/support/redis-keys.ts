import { randomBytes } from 'node:crypto';
import { closeRedis, createRedis } from '../../src/redis.js';

/** Each bench run works under its own Redis prefix and deletes every key under it at the end. */

export function benchPrefix(name: string): string {
  return `rc-bench-${name}-${randomBytes(4).toString('hex')}`;
}

/** Deletes every key that starts with `${prefix}:`; returns how many were deleted. */
export async function deleteKeys(redisUrl: string, prefix: string): Promise<number> {
  const redis = createRedis(redisUrl, 'worker', `${prefix}-cleanup`);
  let deleted = 0;
  try {
    let cursor = '0';
    // A scan visits every key once per full cycle; the bound only guards against a server that never ends it.
    for (let round = 0; round < 1_000_000; round++) {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      if (keys.length > 0) deleted += await redis.unlink(...keys);
      cursor = next;
      if (cursor === '0') break;
    }
  } finally {
    await closeRedis(redis);
  }
  return deleted;
}
