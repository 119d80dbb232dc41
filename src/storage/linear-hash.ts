import { z } from 'zod';
import type { RedisClient } from '../redis.js';
import { libraryConstant } from './lua-loader.js';
import { LuaScript } from './lua-script.js';

/**
 * A map of many small fields kept in Redis as a linear hash (Litwin): a meta hash at the map's stem (`k` the
 * level, `p` the split pointer, `n` the fields in buckets) and buckets `<stem>:<b>`, each a plain hash small
 * enough for Redis's compact listpack encoding (default `hash-max-listpack-entries` 128, `-value` 64). One
 * big hash of a million fields pays a hash-table entry, two SDS strings and their allocations per field (about
 * 60 bytes before the data); a listpack pays one or two bytes. A field goes to bucket `h mod 2^k`, or `h mod
 * 2^(k+1)` when that is below `p`; each time the average load passes LOAD, bucket `p` is split into itself and
 * `p + 2^k`, so the map grows one bucket at a time, never by a rehash of everything. A field or value longer than
 * the listpack limit would turn its whole bucket into a hash table, so it lives in `<stem>:big` instead.
 *
 * Every read and write goes through Lua (lua/lib/linear-hash.lua, included by the scripts of the link index,
 * review queue, slug index and fan-out): a split moves fields between buckets, and a script sees the map either
 * before it or after it.
 * The bucket keys are built inside the scripts from the stem; they carry the stem's hash tag, so on a Redis
 * Cluster they are in the stem's slot. `h` is computed in Lua (`redis.sha1hex`), the only place, so the address
 * a write used and the one a split recomputes cannot disagree. A map never shrinks: buckets emptied by deletes
 * stay (a few bytes each) until the keys are deleted with their installation.
 */

/** Average fields per bucket before a split, as lib/linear-hash.lua decides it. */
export const LINEAR_HASH_LOAD = libraryConstant('linear-hash', 'LH_LOAD');

const PAGE = LuaScript.load('lh-page');
const BUCKETS_PER_PAGE = 50;
const pageReply = z.tuple([z.number(), z.array(z.string())]);

const SIZE = LuaScript.load('lh-size');
const sizeReply = z.number();

const GET_MANY = LuaScript.load('lh-get-many');
/** A reply with gaps: Redis ends a Lua list at its first nil, so the missing tail reads as absent too. */
const getManyReply = z.array(z.string().nullable());

/** Scripts take at most this many fields (or records) per call, so that none holds Redis for long. */
export const FIELDS_PER_CALL = 500;

/** The values of some fields of one map, in their order; null where absent. */
export async function getLinearHashFields(
  redis: RedisClient,
  stem: string,
  fields: readonly string[],
): Promise<(string | null)[]> {
  const out: (string | null)[] = [];
  for (let i = 0; i < fields.length; i += FIELDS_PER_CALL) {
    const some = fields.slice(i, i + FIELDS_PER_CALL);
    const raw = await GET_MANY.run(redis, [stem], some, getManyReply);
    out.push(...some.map((_, j) => raw[j] ?? null));
  }
  return out;
}

/** How many fields one map holds. */
export async function linearHashSize(redis: RedisClient, stem: string): Promise<number> {
  return SIZE.run(redis, [stem], [], sizeReply);
}

/**
 * Every field and value of one map, a page of buckets (about 2,000 fields) per call, never all at once. Like
 * HSCAN it is no snapshot: a field written meanwhile may or may not be seen. A split meanwhile can move fields
 * from a bucket already read into a new one read later: they come again, and `visit` may see a field twice
 * (callers collect into a Map). It stops early when `visit` returns false.
 */
export async function scanLinearHash(
  redis: RedisClient,
  stem: string,
  visit: (field: string, value: string) => boolean | undefined,
): Promise<void> {
  let from = 0;
  for (;;) {
    const [total, flat] = await PAGE.run(redis, [stem], [from, BUCKETS_PER_PAGE], pageReply);
    for (let i = 0; i + 1 < flat.length; i += 2) {
      if (visit(flat[i]!, flat[i + 1]!) === false) return;
    }
    from += BUCKETS_PER_PAGE;
    if (from > total) return;
  }
}

/**
 * Deletes one map: its buckets a thousand at a time (one slot: they share the stem's hash tag), then its meta
 * hash, last, so that a map still there says a deletion cut short is not done.
 */
export async function deleteLinearHash(redis: RedisClient, stem: string): Promise<void> {
  const [k, p] = await redis.hmget(stem, 'k', 'p');
  const buckets = 2 ** Number(k ?? 0) + Number(p ?? 0);
  const keys = [`${stem}:big`, ...Array.from({ length: buckets }, (_, b) => `${stem}:${b}`)];
  for (let i = 0; i < keys.length; i += 1000) await redis.unlink(...keys.slice(i, i + 1000));
  await redis.unlink(stem);
}
