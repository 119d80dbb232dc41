import { z } from 'zod';
import type { RedisClient } from '../redis.js';
import type { Keys } from './keys.js';
import { LuaScript } from './lua-script.js';

/**
 * When the service last said each report changed (score.changed), as a number from the same counter as report
 * reads (`Keys.reportSeq`): a read of a slug that started before its last change is stale.
 */

const SLUG_CHANGED = LuaScript.load('slug-changed');

/** From now on, a read of `slug` that started earlier is stale. The stored number only ever grows. */
export async function markSlugChanged(redis: RedisClient, keys: Keys, slug: string): Promise<number> {
  const seq = await redis.incr(keys.reportSeq());
  await SLUG_CHANGED.run(redis, [keys.slugChanges()], [slug, seq], z.enum(['set', 'older']));
  return seq;
}

/** Sequence number of the last change event of `slug` (0 when none). */
export async function slugChangeSeq(redis: RedisClient, keys: Keys, slug: string): Promise<number> {
  return Number((await redis.hget(keys.slugChanges(), slug)) ?? 0);
}

/** The same for several slugs at once. */
export async function slugChangeSeqs(
  redis: RedisClient,
  keys: Keys,
  slugs: string[],
): Promise<Map<string, number>> {
  if (slugs.length === 0) return new Map();
  const raw = await redis.hmget(keys.slugChanges(), ...slugs);
  return new Map(slugs.map((slug, i) => [slug, Number(raw[i] ?? 0)]));
}
