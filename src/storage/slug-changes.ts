import { z } from 'zod';
import type { RedisClient } from '../redis.js';
import type { Keys } from './keys.js';
import { LuaScript } from './lua-script.js';

/**
 * When the service last said each report changed (score.changed), as a number from the same counter as report
 * reads (`Keys.reportSeq`): a read of a slug that started before its last change is stale.
 */

const SLUG_CHANGED = LuaScript.load('slug-changed');
const slugChangedReply = z.enum(['set', 'older']);

/** From now on, a read of `slug` that started earlier is stale. The stored number only ever grows. */
export async function markSlugChanged(redis: RedisClient, keys: Keys, slug: string): Promise<number> {
  const seq = await redis.incr(keys.reportSeq());
  await SLUG_CHANGED.run(redis, [keys.slugChanges()], [slug, seq], slugChangedReply);
  return seq;
}

/** The field of `Keys.slugChanges` holding the last publication: no slug starts with `*` (reports/slug.ts). */
const PUBLISHED = '*published';

/**
 * A report was published (report.completed): a kept 404 of its slug is stale, and so is every search made before,
 * since any query may now find it (pipeline/report-reader.ts).
 */
export async function markReportPublished(redis: RedisClient, keys: Keys, slug: string): Promise<void> {
  const seq = await markSlugChanged(redis, keys, slug);
  await SLUG_CHANGED.run(redis, [keys.slugChanges()], [PUBLISHED, seq], slugChangedReply);
}

/** The newest of the last publication and the last change of each of `slugs`: a search older than it is stale. */
export async function searchChangeSeq(redis: RedisClient, keys: Keys, slugs: string[]): Promise<number> {
  const raw = await redis.hmget(keys.slugChanges(), PUBLISHED, ...slugs);
  return Math.max(0, ...raw.map((v) => Number(v ?? 0)));
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

/** The change marks as the pipeline uses them: one store, built in app/stores.ts. */
export class SlugChanges {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  /** A read of `slug` that started before now is stale (markSlugChanged). */
  markChanged(slug: string): Promise<number> {
    return markSlugChanged(this.redis, this.keys, slug);
  }

  /** A report was published: its kept 404 and every older search are stale (markReportPublished). */
  markPublished(slug: string): Promise<void> {
    return markReportPublished(this.redis, this.keys, slug);
  }

  /** The last change of each of `slugs`, 0 where none (slugChangeSeqs). */
  seqs(slugs: string[]): Promise<Map<string, number>> {
    return slugChangeSeqs(this.redis, this.keys, slugs);
  }
}
