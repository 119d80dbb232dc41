import type { RedisClient } from '../redis.js';
import { RedisScript } from './redis-script.js';

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
 * Every read and write goes through Lua (this library, prepended to the scripts of link-index.ts and
 * slug-fanout.ts): a split moves fields between buckets, and a script sees the map either before it or after it.
 * The bucket keys are built inside the scripts from the stem; they carry the stem's hash tag, so on a Redis
 * Cluster they are in the stem's slot. `h` is computed in Lua (`redis.sha1hex`), the only place, so the address
 * a write used and the one a split recomputes cannot disagree. A map never shrinks: buckets emptied by deletes
 * stay (a few bytes each) until the keys are deleted with their installation.
 */

/** Average fields per bucket before a split: the unsplit buckets hold up to twice that, well under 128. */
export const LINEAR_HASH_LOAD = 40;
/** The longest field or value kept in a bucket (Redis's default `hash-max-listpack-value`). */
export const LINEAR_HASH_MAX_INLINE = 64;

export const LINEAR_HASH_LUA = `
local LH_LOAD = ${LINEAR_HASH_LOAD}
local LH_INLINE = ${LINEAR_HASH_MAX_INLINE}

local function lh_open(stem)
  local m = redis.call('HMGET', stem, 'k', 'p', 'n')
  return { stem = stem, k = tonumber(m[1]) or 0, p = tonumber(m[2]) or 0, n = tonumber(m[3]) or 0, dirty = false }
end

local function lh_h(field)
  return tonumber(string.sub(redis.sha1hex(field), 1, 8), 16)
end

local function lh_bucket(M, field)
  local h = lh_h(field)
  local size = 2 ^ M.k
  local b = h % size
  if b < M.p then b = h % (size * 2) end
  return M.stem .. ':' .. string.format('%d', b)
end

local function lh_get(M, field)
  local v = redis.call('HGET', lh_bucket(M, field), field)
  if not v then v = redis.call('HGET', M.stem .. ':big', field) end
  return v
end

local function lh_split(M)
  local size = 2 ^ M.k
  local from = M.stem .. ':' .. string.format('%d', M.p)
  local to = M.stem .. ':' .. string.format('%d', M.p + size)
  local flat = redis.call('HGETALL', from)
  local moved, names = {}, {}
  for i = 1, #flat, 2 do
    if lh_h(flat[i]) % (size * 2) ~= M.p then
      moved[#moved + 1] = flat[i]
      moved[#moved + 1] = flat[i + 1]
      names[#names + 1] = flat[i]
    end
  end
  if #names > 0 then
    redis.call('HSET', to, unpack(moved))
    redis.call('HDEL', from, unpack(names))
  end
  M.p = M.p + 1
  if M.p == size then
    M.k = M.k + 1
    M.p = 0
  end
  M.dirty = true
end

local function lh_set(M, field, value)
  local bucket = lh_bucket(M, field)
  if #field > LH_INLINE or #value > LH_INLINE then
    redis.call('HSET', M.stem .. ':big', field, value)
    if redis.call('HDEL', bucket, field) == 1 then
      M.n = M.n - 1
      M.dirty = true
    end
    return
  end
  if redis.call('HSET', bucket, field, value) == 1 then
    M.n = M.n + 1
    M.dirty = true
    redis.call('HDEL', M.stem .. ':big', field)
    if M.n > LH_LOAD * (2 ^ M.k + M.p) then lh_split(M) end
  end
end

local function lh_del(M, field)
  if redis.call('HDEL', lh_bucket(M, field), field) == 1 then
    M.n = M.n - 1
    M.dirty = true
  else
    redis.call('HDEL', M.stem .. ':big', field)
  end
end

local function lh_close(M)
  if M.dirty then redis.call('HSET', M.stem, 'k', M.k, 'p', M.p, 'n', M.n) end
end

local function lh_buckets(M)
  return 2 ^ M.k + M.p
end
`;

/**
 * KEYS[1] the stem; ARGV from, count. Buckets `from` .. `from + count - 1` as one flat field/value list, and the
 * number of buckets now; the index equal to that number stands for `<stem>:big`.
 */
const PAGE = new RedisScript(`${LINEAR_HASH_LUA}
local M = lh_open(KEYS[1])
local total = lh_buckets(M)
local from, count = tonumber(ARGV[1]), tonumber(ARGV[2])
local out = {}
for b = from, math.min(from + count - 1, total) do
  local key = M.stem .. ':' .. string.format('%d', b)
  if b == total then key = M.stem .. ':big' end
  local flat = redis.call('HGETALL', key)
  for i = 1, #flat do out[#out + 1] = flat[i] end
end
return { total, out }
`);

const BUCKETS_PER_PAGE = 50;

/** KEYS[1] the stem. The fields in buckets (the meta hash counts them) and those in `<stem>:big`. */
const SIZE = new RedisScript(`
return (tonumber(redis.call('HGET', KEYS[1], 'n')) or 0) + redis.call('HLEN', KEYS[1] .. ':big')
`);

/** How many fields one map holds. */
export async function linearHashSize(redis: RedisClient, stem: string): Promise<number> {
  return Number(await SIZE.run(redis, [stem], []));
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
    const [total, flat] = (await PAGE.run(redis, [stem], [from, BUCKETS_PER_PAGE])) as [number, string[]];
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
