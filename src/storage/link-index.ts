import { createHash } from 'node:crypto';
import { z } from 'zod';
import { MATCH_STATUSES, type MatchStatus } from '../fields.js';
import {
  COUNTRY_DIGEST_LENGTH,
  DOMAIN_DIGEST_LENGTH,
  type PlaceDigest,
  placeDigest,
} from '../matching/shared-links.js';
import type { RedisClient } from '../redis.js';
import { parseStoredJson } from '../util/json.js';
import type { Keys } from './keys.js';
import { LINEAR_HASH_LUA, linearHashSize, scanLinearHash } from './linear-hash.js';
import { RedisScript } from './redis-script.js';
import { SLUG_DIGEST_LUA, SlugFanout, slugDigest } from './slug-fanout.js';

/**
 * What the connector remembers about each record besides the CRM itself: which slug it is linked to (and the
 * reverse, for fan-out), its match status and score (for the admin page without CRM calls), whether the
 * connector made the link itself, the review candidates and the ones a person rejected, the fingerprint the
 * change poll compares (and where that poll stopped), and the report sequence last written. This module is the
 * only one that reads or writes those keys. Everything here but the rejections can be rebuilt from the CRM by
 * a full sync: the record's `report_slug` is the source of truth.
 *
 * Storage (issue 15: at most 150 bytes of Redis per linked record). A record's state is one short string,
 * `seq|slug|status|score|auto|fingerprint|unlinked name` (`packState`), in a linear-hash map of compact buckets
 * (linear-hash.ts); an auto-link keeps in its `auto` part a digest of the record's domain and country when
 * linked (`placeDigest`, what tells records on one report apart), not the values; the reverse index slug
 * digest -> record ids in a second map; the deployment's slug ->
 * installations fan-out in slug-fanout.ts. Every write is a Lua script that first checks the installation's
 * hash still exists (same hash tag): a batch still running when its installation is removed writes nothing
 * after the removal deleted the hash. Review items are short strings (`storeReview`) in a linear-hash map of their
 * own, their candidates named by a short reference under which each report's details are kept once
 * (`reviewCandidates`).
 */

const rejectedSlugsSchema = z.array(z.string());

export const reviewCandidateSchema = z.object({
  slug: z.string(),
  name: z.string(),
  industry: z.string().nullish(),
  stage: z.string().nullish(),
  geography: z.string().nullish(),
  score: z.number().nullish(),
  why: z.string().optional(),
});
export type ReviewCandidate = z.infer<typeof reviewCandidateSchema>;

export const reviewItemSchema = z.object({
  recordId: z.string(),
  name: z.string().nullable(),
  country: z.string().nullish(),
  industry: z.string().nullish(),
  candidates: z.array(reviewCandidateSchema),
  at: z.string(),
});
export type ReviewItem = z.infer<typeof reviewItemSchema>;

export interface RecordState {
  recordId: string;
  slug: string | null;
  status: MatchStatus | null;
  score: number | null;
  autoLinked: boolean;
  /** Normalised name for unlinked records (report.completed), null when linked. */
  unlinkedName: string | null;
  review: ReviewItem | null;
  /** name/domain/slug fingerprint for change polling. */
  fingerprint: Fingerprint;
  /** The record's domain and country: a digest of each is kept while the link is the connector's own. */
  place?: LinkPlace;
}

export interface LinkPlace {
  domain: string | null;
  country: string | null;
}

/**
 * The records the connector itself linked to one report, with the digests of their places as they were when
 * linked (null: not known, a link made before the digests were kept or inherited in a merge).
 */
export interface AutoLinkGroup {
  slug: string;
  records: Array<{ recordId: string; place: PlaceDigest | null }>;
}

/** What the change poll compares to tell a rename or a hand-set slug from the connector's own writes. */
export interface Fingerprint {
  name: string;
  domain: string;
  slug: string;
}

/**
 * A fingerprint as kept: a short digest of each part (3 base64url characters, 18 bits, of its SHA-1; `.` for an
 * empty part, which many records' domains are). The poll only asks whether each part changed; a change goes
 * unseen when its two digests collide, one in 262,144 changes, and the daily reconcile then writes the record.
 */
export interface FingerprintDigest {
  name: string;
  domain: string;
  slug: string;
}

/** Where the change poll stopped; `since` is the time of the first poll (epoch ms). */
export interface PollCursor {
  cursor: string;
  since: number;
}

/** One character per status in the packed state. */
const STATUS_CODES: Record<MatchStatus, string> = {
  matched: 'm',
  needs_review: 'r',
  no_match: 'n',
  not_published: 'p',
  requested: 'q',
  error: 'e',
};
const STATUS_OF_CODE = new Map(Object.entries(STATUS_CODES).map(([s, c]) => [c, s as MatchStatus]));

/** A record's packed state, parsed (`packState` writes it). */
interface StoredState {
  seq: number;
  slug: string | null;
  status: MatchStatus | null;
  score: number | null;
  /** The slug the connector linked itself, when it did. */
  autoSlug: string | null;
  /** The digests of the auto-linked record's place when linked; null when not known. */
  place: PlaceDigest | null;
  fingerprint: FingerprintDigest | null;
  unlinkedName: string | null;
}

// ---- Lua ------------------------------------------------------------------------------------------------

/**
 * Shared by the write scripts: the packed state's first two parts (seq, slug), and the reverse index slug
 * digest -> space-joined record ids. The digest is `slugDigest` (slug-fanout.ts) computed here.
 */
const RECORD_LUA = `${LINEAR_HASH_LUA}${SLUG_DIGEST_LUA}
local function seq_of(v) return string.match(v, '^([^|]*)') end
local function slug_of(v) return string.match(v, '^[^|]*|([^|]*)') or '' end
local function rest_of(v) return string.match(v, '^[^|]*|(.*)$') or '' end
local function parts(v)
  local t = {}
  for s in string.gmatch(v .. '|', '([^|]*)|') do t[#t + 1] = s end
  return t
end
local function join(t)
  local n = #t
  while n > 1 and t[n] == '' do n = n - 1 end
  return table.concat(t, '|', 1, n)
end
local function by_slug_add(B, slug, id)
  local d = slug_digest(slug)
  local v = lh_get(B, d)
  if not v then lh_set(B, d, id)
  elseif not string.find(' ' .. v .. ' ', ' ' .. id .. ' ', 1, true) then lh_set(B, d, v .. ' ' .. id) end
end
local function by_slug_remove(B, slug, id)
  local d = slug_digest(slug)
  local v = lh_get(B, d)
  if not v then return end
  local kept = {}
  for member in string.gmatch(v, '%S+') do
    if member ~= id then kept[#kept + 1] = member end
  end
  if #kept == 0 then lh_del(B, d) else lh_set(B, d, table.concat(kept, ' ')) end
end
-- Review items: a candidate is named in the item by a reference, a digest of its slug (5 hex digits; on a
-- clash with another slug, of the slug and a counter, longer after a few tries), under which its report's details
-- are kept once with a count of the items naming it.
local function cand_ref(candKey, slug)
  for i = 0, 64 do
    local ref = string.sub(redis.sha1hex(i == 0 and slug or (slug .. '#' .. i)), 1, i < 8 and 5 or 12)
    local d = redis.call('HGET', candKey, ref)
    if not d or cjson.decode(d)[1] == slug then return ref end
  end
  error('no free review candidate reference for ' .. slug)
end
local function review_refs(stored)
  local out = {}
  local list = stored and string.match(stored, '^[^|]*|[^|]*|[^|]*|[^|]*|(.*)$')
  if not list then return out end
  for c in string.gmatch(list, '[^;]+') do out[#out + 1] = string.match(c, '^([^,]*)') end
  return out
end
local function review_set(RV, candKey, id, raw, cands)
  local old = lh_get(RV, id)
  if raw ~= '' then
    local head, list = string.match(raw, '^([^|]*|[^|]*|[^|]*|[^|]*|)(.*)$')
    local details = cjson.decode(cands)
    local out = {}
    for c in string.gmatch(list, '[^;]+') do
      local slug, tail = string.match(c, '^([^,]*)(.*)$')
      local ref = cand_ref(candKey, slug)
      redis.call('HINCRBY', candKey, '#' .. ref, 1)
      if details[slug] then redis.call('HSET', candKey, ref, details[slug])
      else redis.call('HSETNX', candKey, ref, cjson.encode({ slug, slug, false, false, false })) end
      out[#out + 1] = ref .. tail
    end
    lh_set(RV, id, head .. table.concat(out, ';'))
  elseif old then
    lh_del(RV, id)
  end
  for _, ref in ipairs(review_refs(old)) do
    if redis.call('HINCRBY', candKey, '#' .. ref, -1) <= 0 then redis.call('HDEL', candKey, ref, '#' .. ref) end
  end
end
`;

/**
 * KEYS: installation hash, records, by-slug, review, review candidates. ARGV: then five per record: id, packed
 * state without its seq, stored slug, review item, its candidates' details (JSON object). The record's written
 * seq is kept; an empty review item deletes it. 0 when the installation is gone.
 */
const APPLY = new RedisScript(`${RECORD_LUA}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local R, B, RV = lh_open(KEYS[2]), lh_open(KEYS[3]), lh_open(KEYS[4])
for i = 1, #ARGV, 5 do
  local id, rest, slug, review, cands = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
  local old = lh_get(R, id)
  local before = old and slug_of(old) or ''
  if before ~= slug then
    if before ~= '' then by_slug_remove(B, before, id) end
    if slug ~= '' then by_slug_add(B, slug, id) end
  end
  lh_set(R, id, (old and seq_of(old) or '') .. '|' .. rest)
  review_set(RV, KEYS[5], id, review, cands)
end
lh_close(R)
lh_close(B)
lh_close(RV)
return 1
`);

/** KEYS: installation hash, records, by-slug, review, review candidates. ARGV: record ids. */
const FORGET = new RedisScript(`${RECORD_LUA}
local R, B, RV = lh_open(KEYS[2]), lh_open(KEYS[3]), lh_open(KEYS[4])
for _, id in ipairs(ARGV) do
  local old = lh_get(R, id)
  if old then
    local slug = slug_of(old)
    if slug ~= '' then by_slug_remove(B, slug, id) end
    lh_del(R, id)
  end
  review_set(RV, KEYS[5], id, '', '')
end
lh_close(R)
lh_close(B)
lh_close(RV)
return 1
`);

/** KEYS: installation hash, records. ARGV: pairs of record id, seq (base 36). */
const SET_SEQS = new RedisScript(`${RECORD_LUA}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local R = lh_open(KEYS[2])
for i = 1, #ARGV, 2 do
  local old = lh_get(R, ARGV[i])
  local rest = old and rest_of(old) or ''
  if rest ~= '' then lh_set(R, ARGV[i], ARGV[i + 1] .. '|' .. rest) else lh_set(R, ARGV[i], ARGV[i + 1]) end
end
lh_close(R)
return 1
`);

/**
 * KEYS: installation hash, records. ARGV: record id, stored slug or '' (drop the auto-link and its place digest).
 * Part 5 of the state is '*' (and the place digest, `packAuto`) for an auto-link to the record's own slug,
 * '=<slug>' for another slug. An auto-link already there keeps its place digest.
 */
const SET_AUTO = new RedisScript(`${RECORD_LUA}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local R = lh_open(KEYS[2])
local id, slug = ARGV[1], ARGV[2]
local old = lh_get(R, id)
local t = parts(old or '')
for i = #t + 1, 5 do t[i] = '' end
if slug == '' then
  t[5] = ''
  if not old then return 1 end
elseif t[2] == slug then
  if string.sub(t[5], 1, 1) ~= '*' then t[5] = '*' end
else t[5] = '=' .. slug end
lh_set(R, id, join(t))
lh_close(R)
return 1
`);

/** KEYS: one map's stem. ARGV: fields. Their values, nil where absent. */
const GET_MANY = new RedisScript(`${LINEAR_HASH_LUA}
local M = lh_open(KEYS[1])
local out = {}
for i, f in ipairs(ARGV) do out[i] = lh_get(M, f) end
return out
`);

/** KEYS: by-slug, records. ARGV: stored slug. The ids on the slug's digest whose own slug is that slug. */
const RECORDS_FOR_SLUG = new RedisScript(`${RECORD_LUA}
local B, R = lh_open(KEYS[1]), lh_open(KEYS[2])
local v = lh_get(B, slug_digest(ARGV[1]))
local out = {}
if not v then return out end
for id in string.gmatch(v, '%S+') do
  local state = lh_get(R, id)
  if state and slug_of(state) == ARGV[1] then out[#out + 1] = id end
end
return out
`);

/**
 * KEYS: installation hash, records, by-slug. ARGV: record ids. Puts each record under its state's slug in the
 * by-slug map (a record already there is left as it is).
 */
const REINDEX = new RedisScript(`${RECORD_LUA}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local R, B = lh_open(KEYS[2]), lh_open(KEYS[3])
for _, id in ipairs(ARGV) do
  local state = lh_get(R, id)
  local slug = state and slug_of(state) or ''
  if slug ~= '' then by_slug_add(B, slug, id) end
end
lh_close(B)
return 1
`);

/** KEYS: installation hash, a hash. ARGV: field/value pairs, written only while the installation exists. */
const HSET_IF_INSTALLED = new RedisScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[2], unpack(ARGV))
return 1
`);

/** Scripts take at most this many records per call, so that none holds Redis for long. */
const RECORDS_PER_CALL = 500;

export class LinkIndex {
  private readonly fanout: SlugFanout;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {
    this.fanout = new SlugFanout(redis, keys);
  }

  /**
   * Applies the state of many records; moving a record between slugs is atomic. Writes nothing once the
   * installation is removed.
   */
  async apply(installationId: string, states: RecordState[]): Promise<void> {
    if (states.length === 0) return;
    // The slug -> installations fan-out is global (its own slots), so it is written before the installation's
    // own script rather than in it: a fan-out between the two finds this installation with no record on the
    // slug yet, never a linked record missing from the fan-out.
    const digests = [...new Set(states.flatMap((s) => (s.slug ? [slugDigest(escapePart(s.slug))] : [])))];
    await this.fanout.add(installationId, digests);
    const k = this.keys;
    const keys = [
      k.installation(installationId),
      k.recordStates(installationId),
      k.slugRecords(installationId),
      k.review(installationId),
      k.reviewCandidates(installationId),
    ];
    for (let i = 0; i < states.length; i += RECORDS_PER_CALL) {
      const args = states.slice(i, i + RECORDS_PER_CALL).flatMap((s) => {
        const review = s.review ? storeReview(s.review) : null;
        return [
          s.recordId,
          packState(s),
          s.slug ? escapePart(s.slug) : '',
          review?.item ?? '',
          review?.candidates ?? '',
        ];
      });
      if ((await APPLY.run(this.redis, keys, args)) === 0) {
        // Removed meanwhile: take back what was just added to the fan-out (the removal may have read the
        // installation's slugs before it).
        await this.fanout.remove(installationId, digests);
        await this.fanout.forgetInstallation(installationId);
        return;
      }
    }
  }

  /** Forgets records that were deleted or merged away. */
  async forget(installationId: string, recordIds: string[]): Promise<void> {
    const k = this.keys;
    const keys = [
      k.installation(installationId),
      k.recordStates(installationId),
      k.slugRecords(installationId),
      k.review(installationId),
      k.reviewCandidates(installationId),
    ];
    for (let i = 0; i < recordIds.length; i += RECORDS_PER_CALL) {
      await FORGET.run(this.redis, keys, recordIds.slice(i, i + RECORDS_PER_CALL));
    }
  }

  async recordsForSlug(installationId: string, slug: string): Promise<string[]> {
    const ids = (await RECORDS_FOR_SLUG.run(
      this.redis,
      [this.keys.slugRecords(installationId), this.keys.recordStates(installationId)],
      [escapePart(slug)],
    )) as string[];
    return ids.sort();
  }

  /**
   * Installations with a record on the slug, or that had one: an installation is not taken out when its last
   * record leaves a slug, and two slugs may share a digest (slug-fanout.ts). The fan-out finds no record there.
   */
  async installationsForSlug(slug: string): Promise<string[]> {
    return (await this.fanout.installations(slugDigest(escapePart(slug)))).sort();
  }

  /** The slug each record is linked to, as last written; null where none. */
  async slugsOf(installationId: string, recordIds: string[]): Promise<(string | null)[]> {
    return (await this.states(installationId, recordIds)).map((s) => s?.slug ?? null);
  }

  /**
   * Writes the slug -> records map and this installation's part of the fan-out again from the records' states:
   * the start-up upgrade when their digests changed form. Adding is idempotent, and the fan-out is written
   * first as in `apply`. Returns how many linked records it found.
   */
  async rebuildSlugIndex(installationId: string): Promise<number> {
    const linked = new Map<string, string>();
    await this.scanStates(installationId, (recordId, state) => {
      if (state.slug) linked.set(recordId, escapePart(state.slug));
      else linked.delete(recordId);
      return true;
    });
    await this.fanout.add(installationId, [...new Set([...linked.values()].map(slugDigest))]);
    const ids = [...linked.keys()];
    const k = this.keys;
    for (let i = 0; i < ids.length; i += RECORDS_PER_CALL) {
      const keys = [
        k.installation(installationId),
        k.recordStates(installationId),
        k.slugRecords(installationId),
      ];
      if ((await REINDEX.run(this.redis, keys, ids.slice(i, i + RECORDS_PER_CALL))) === 0) break;
    }
    return linked.size;
  }

  /** Records that the connector made this link itself (a merge survivor inheriting an auto-link). */
  async markAutoLink(installationId: string, recordId: string, slug: string): Promise<void> {
    await this.setAuto(installationId, recordId, escapePart(slug));
  }

  /**
   * Before an installation is removed (and after its hash is deleted, so that no batch adds to the index any
   * more): it no longer takes part in any slug's fan-out.
   */
  async forgetInstallation(installationId: string): Promise<void> {
    const digests = new Set<string>();
    await scanLinearHash(this.redis, this.keys.slugRecords(installationId), (digest) => {
      digests.add(digest);
      return true;
    });
    await this.fanout.remove(installationId, [...digests]);
    await this.fanout.forgetInstallation(installationId);
  }

  async autoLinkOf(installationId: string, recordId: string): Promise<string | null> {
    const [slug = null] = await this.autoLinksOf(installationId, [recordId]);
    return slug;
  }

  /** The link is no longer the connector's own (a person set or confirmed it). */
  async dropAutoLink(installationId: string, recordId: string): Promise<void> {
    await this.setAuto(installationId, recordId, '');
  }

  /** Reports the connector linked to more than one record by itself, with the digests of those records' places. */
  async sharedAutoLinks(installationId: string): Promise<AutoLinkGroup[]> {
    const bySlug = new Map<string, Map<string, PlaceDigest | null>>();
    await this.scanStates(installationId, (recordId, state) => {
      if (!state.autoSlug) return true;
      const records = bySlug.get(state.autoSlug) ?? new Map<string, PlaceDigest | null>();
      records.set(recordId, state.place);
      bySlug.set(state.autoSlug, records);
      return true;
    });
    return [...bySlug]
      .filter(([, records]) => records.size > 1)
      .map(([slug, records]) => ({
        slug,
        records: [...records]
          .map(([recordId, place]) => ({ recordId, place }))
          .sort((a, b) => a.recordId.localeCompare(b.recordId)),
      }))
      .sort((a, b) => a.slug.localeCompare(b.slug));
  }

  async autoLinksOf(installationId: string, recordIds: string[]): Promise<(string | null)[]> {
    return (await this.states(installationId, recordIds)).map((s) => s?.autoSlug ?? null);
  }

  /** Slugs a person rejected for this record: never offered again. */
  async rejectedSlugs(installationId: string, recordId: string): Promise<Set<string>> {
    const raw = await this.redis.hget(this.keys.rejected(installationId), recordId);
    return new Set(parseStoredJson(rejectedSlugsSchema, raw) ?? []);
  }

  async addRejectedSlugs(installationId: string, recordId: string, slugs: string[]): Promise<void> {
    const rejected = await this.rejectedSlugs(installationId, recordId);
    for (const slug of slugs) rejected.add(slug);
    await HSET_IF_INSTALLED.run(
      this.redis,
      [this.keys.installation(installationId), this.keys.rejected(installationId)],
      [recordId, JSON.stringify([...rejected])],
    );
  }

  /** The fingerprint last seen per record, as digests (compare with `digestFingerprint`); null when never seen. */
  async fingerprints(installationId: string, recordIds: string[]): Promise<(FingerprintDigest | null)[]> {
    return (await this.states(installationId, recordIds)).map((s) => s?.fingerprint ?? null);
  }

  async pollCursor(installationId: string): Promise<PollCursor | null> {
    const [cursor, since] = await this.redis.hmget(this.keys.pollCursor(installationId), 'cursor', 'since');
    if (!cursor || !since || !Number.isFinite(Number(since))) return null;
    return { cursor, since: Number(since) };
  }

  /** The time of the first poll, once set, stays. */
  async setPollCursor(installationId: string, cursor: PollCursor): Promise<void> {
    await HSET_IF_INSTALLED.run(
      this.redis,
      [this.keys.installation(installationId), this.keys.pollCursor(installationId)],
      ['cursor', cursor.cursor, 'since', String(cursor.since)],
    );
  }

  async unlinkedNames(installationId: string): Promise<Map<string, string>> {
    const names = new Map<string, string>();
    await this.scanStates(installationId, (recordId, state) => {
      if (state.unlinkedName !== null) names.set(recordId, state.unlinkedName);
      else names.delete(recordId);
      return true;
    });
    return names;
  }

  async reviewItems(installationId: string): Promise<ReviewItem[]> {
    const raw = new Map<string, string>();
    await scanLinearHash(this.redis, this.keys.review(installationId), (recordId, value) => {
      raw.set(recordId, value);
      return true;
    });
    const items = await this.readReviews(installationId, [...raw]);
    return items.filter((r) => r !== null).sort((a, b) => (a.name ?? '').localeCompare(b.name ?? ''));
  }

  async reviewItem(installationId: string, recordId: string): Promise<ReviewItem | null> {
    const [item = null] = await this.reviewItemsOf(installationId, [recordId]);
    return item;
  }

  /** The review items of these records, in their order; null where a record is not waiting for review. */
  async reviewItemsOf(installationId: string, recordIds: readonly string[]): Promise<(ReviewItem | null)[]> {
    if (recordIds.length === 0) return [];
    const raw = await this.getMany(this.keys.review(installationId), recordIds);
    return this.readReviews(
      installationId,
      recordIds.map((id, i) => [id, raw[i] ?? null]),
    );
  }

  /** The match status of each record as last written, in their order (null: not processed). */
  async statusesOf(installationId: string, recordIds: readonly string[]): Promise<(MatchStatus | null)[]> {
    return (await this.states(installationId, recordIds)).map((s) => s?.status ?? null);
  }

  async reviewCount(installationId: string): Promise<number> {
    return linearHashSize(this.redis, this.keys.review(installationId));
  }

  async statusOf(installationId: string, recordId: string): Promise<MatchStatus | null> {
    const [status = null] = await this.statusesOf(installationId, [recordId]);
    return status;
  }

  /**
   * Up to `limit` records in one status with their normalised names, for the admin page's list of companies
   * without a report. Scans the records' states a page of buckets at a time, never all at once.
   */
  async recordsWithStatus(
    installationId: string,
    status: MatchStatus,
    limit: number,
  ): Promise<{ recordId: string; normalizedName: string | null }[]> {
    const found = new Map<string, string | null>();
    if (limit <= 0) return [];
    await this.scanStates(installationId, (recordId, state) => {
      if (state.status === status) found.set(recordId, state.unlinkedName);
      return found.size < limit;
    });
    return [...found].map(([recordId, normalizedName]) => ({ recordId, normalizedName }));
  }

  async coverage(installationId: string): Promise<Record<MatchStatus, number>> {
    const counts = Object.fromEntries(MATCH_STATUSES.map((s) => [s, 0])) as Record<MatchStatus, number>;
    for (const state of (await this.allStates(installationId)).values()) {
      if (state.status) counts[state.status] += 1;
    }
    return counts;
  }

  async scores(installationId: string): Promise<number[]> {
    return [...(await this.allStates(installationId)).values()].flatMap((s) =>
      s.score !== null ? [s.score] : [],
    );
  }

  /** Highest report sequence already written per record (0 when none). */
  async writtenSeqs(installationId: string, recordIds: string[]): Promise<number[]> {
    return (await this.states(installationId, recordIds)).map((s) => s?.seq ?? 0);
  }

  async setWrittenSeqs(installationId: string, seqs: Map<string, number>): Promise<void> {
    const entries = [...seqs];
    for (let i = 0; i < entries.length; i += RECORDS_PER_CALL) {
      await SET_SEQS.run(
        this.redis,
        [this.keys.installation(installationId), this.keys.recordStates(installationId)],
        entries.slice(i, i + RECORDS_PER_CALL).flatMap(([id, seq]) => [id, seq > 0 ? seq.toString(36) : '']),
      );
    }
  }

  private async setAuto(installationId: string, recordId: string, storedSlug: string): Promise<void> {
    const k = this.keys;
    await SET_AUTO.run(
      this.redis,
      [k.installation(installationId), k.recordStates(installationId)],
      [recordId, storedSlug],
    );
  }

  private async getMany(stem: string, fields: readonly string[]): Promise<(string | null)[]> {
    const out: (string | null)[] = [];
    for (let i = 0; i < fields.length; i += RECORDS_PER_CALL) {
      const some = fields.slice(i, i + RECORDS_PER_CALL);
      const raw = (await GET_MANY.run(this.redis, [stem], some)) as (string | null)[];
      out.push(...some.map((_, j) => raw[j] ?? null));
    }
    return out;
  }

  private async states(
    installationId: string,
    recordIds: readonly string[],
  ): Promise<(StoredState | null)[]> {
    if (recordIds.length === 0) return [];
    const raw = await this.getMany(this.keys.recordStates(installationId), recordIds);
    return raw.map((v) => (v === null ? null : unpackState(v)));
  }

  private async scanStates(
    installationId: string,
    visit: (recordId: string, state: StoredState) => boolean,
  ): Promise<void> {
    await scanLinearHash(this.redis, this.keys.recordStates(installationId), (recordId, value) =>
      visit(recordId, unpackState(value)),
    );
  }

  /** Every record's state, each once (a split during the scan may show a record twice). */
  private async allStates(installationId: string): Promise<Map<string, StoredState>> {
    const all = new Map<string, StoredState>();
    await this.scanStates(installationId, (recordId, state) => {
      all.set(recordId, state);
      return true;
    });
    return all;
  }

  private async readReviews(
    installationId: string,
    raw: readonly (readonly [string, string | null])[],
  ): Promise<(ReviewItem | null)[]> {
    const stored = raw.map(([id, v]) => [id, v === null ? null : parseReview(v)] as const);
    const refs = [...new Set(stored.flatMap(([, s]) => (s ? s.candidates.map((c) => c.ref) : [])))];
    const details =
      refs.length > 0 ? await this.redis.hmget(this.keys.reviewCandidates(installationId), ...refs) : [];
    const detailsOf = new Map(
      refs.map((ref, i) => [ref, parseStoredJson(storedCandidateSchema, details[i])]),
    );
    return stored.map(([recordId, s]) => (s ? unpackReview(recordId, s, detailsOf) : null));
  }
}

// ---- the packed state -----------------------------------------------------------------------------------

/** `|` separates the parts, so a free-text part (slug, name, domain) has `%` and `|` escaped. */
function escapePart(value: string): string {
  return value.replace(/%/g, '%25').replace(/\|/g, '%7C');
}

function unescapePart(value: string): string {
  return value.replace(/%7C/g, '|').replace(/%25/g, '%');
}

const FINGERPRINT_DIGEST_LENGTH = 3;
/** A fingerprint part's digest when empty. */
const EMPTY_PART = '.';
/** What an empty part's digest was before the fingerprints' digests were 3 characters: the first 4 of its SHA-1. */
const OLD_EMPTY_PART = createHash('sha1').update('').digest('base64url').slice(0, 4);

function shortDigest(value: string): string {
  if (value === '') return EMPTY_PART;
  return createHash('sha1').update(value).digest('base64url').slice(0, FINGERPRINT_DIGEST_LENGTH);
}

/**
 * The stored fingerprint: the name's and the domain's digests, then the slug's when it is not the state's slug.
 * A state written before the digests were 3 characters has 4 each (8 or 12 in all, a length the present form
 * never has): those read as their first 3, which is what the present form keeps of the same SHA-1.
 */
function readFingerprint(fp: string, stateSlug: string): FingerprintDigest | null {
  if (fp.length === 8 || fp.length === 12) {
    const old = (part: string) =>
      part === OLD_EMPTY_PART ? EMPTY_PART : part.slice(0, FINGERPRINT_DIGEST_LENGTH);
    return {
      name: old(fp.slice(0, 4)),
      domain: old(fp.slice(4, 8)),
      slug: fp.length === 12 ? old(fp.slice(8)) : shortDigest(stateSlug),
    };
  }
  const parts: string[] = [];
  let at = 0;
  for (let i = 0; i < 3 && at < fp.length; i += 1) {
    const size = fp[at] === EMPTY_PART ? 1 : FINGERPRINT_DIGEST_LENGTH;
    parts.push(fp.slice(at, at + size));
    at += size;
  }
  const [name, domain, slug] = parts;
  if (name === undefined || domain === undefined || at !== fp.length) return null;
  return { name, domain, slug: slug ?? shortDigest(stateSlug) };
}

export function digestFingerprint(f: Fingerprint): FingerprintDigest {
  return { name: shortDigest(f.name), domain: shortDigest(f.domain), slug: shortDigest(f.slug) };
}

/**
 * Everything but the seq (the script keeps the stored one): `slug|status|score|auto|fingerprint|name`, empty
 * parts at the end left out. The fingerprint is the name's and domain's digests, then the slug's only when it
 * is not the record's linked slug (it nearly always is, or both are empty).
 */
function packState(s: RecordState): string {
  const slug = s.slug ? escapePart(s.slug) : '';
  const fp = digestFingerprint(s.fingerprint);
  const parts = [
    slug,
    s.status ? STATUS_CODES[s.status] : '',
    s.score !== null ? String(s.score) : '',
    s.autoLinked && s.slug ? packAuto(s.place) : '',
    fp.name + fp.domain + (s.fingerprint.slug === (s.slug ?? '') ? '' : fp.slug),
    s.unlinkedName !== null ? escapePart(s.unlinkedName) : '',
  ];
  while (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  return parts.join('|');
}

function unpackState(value: string): StoredState {
  const [seq = '', slugPart = '', status = '', score = '', auto = '', fp = '', name] = value.split('|');
  const slug = slugPart ? unescapePart(slugPart) : null;
  const scoreNumber = score === '' ? Number.NaN : Number(score);
  const own = OWN_AUTO_LINK.exec(auto);
  return {
    seq: seq ? Number.parseInt(seq, 36) : 0,
    slug,
    status: STATUS_OF_CODE.get(status) ?? null,
    score: Number.isFinite(scoreNumber) ? scoreNumber : null,
    autoSlug: own ? slug : auto.startsWith('=') ? unescapePart(auto.slice(1)) : null,
    place: own?.[1] && own[2] ? { domain: unknownDigest(own[1]), country: unknownDigest(own[2]) } : null,
    fingerprint: readFingerprint(fp, slug ?? ''),
    unlinkedName: name !== undefined ? unescapePart(name) : null,
  };
}

/**
 * The `auto` part of an auto-link to the record's own slug: `*`, then the place's digests (`placeDigest`, fixed
 * lengths, `~` for an unknown value) unless both are unknown (a place known on neither part disagrees with none).
 */
function packAuto(place: LinkPlace | undefined): string {
  const digest = place ? placeDigest(place) : { domain: null, country: null };
  if (digest.domain === null && digest.country === null) return '*';
  return `*${digest.domain ?? '~'.repeat(DOMAIN_DIGEST_LENGTH)}${digest.country ?? '~'.repeat(COUNTRY_DIGEST_LENGTH)}`;
}

/** `*` alone, or `*` and both digests; anything else is not an auto-link to the record's own slug. */
const OWN_AUTO_LINK = new RegExp(
  `^\\*(?:([A-Za-z0-9_-]{${DOMAIN_DIGEST_LENGTH}}|~{${DOMAIN_DIGEST_LENGTH}})([A-Za-z0-9_-]{${COUNTRY_DIGEST_LENGTH}}|~{${COUNTRY_DIGEST_LENGTH}}))?$`,
);

function unknownDigest(part: string): string | null {
  return part.startsWith('~') ? null : part;
}

// ---- review items ---------------------------------------------------------------------------------------

/**
 * A review item, stored as `name|country|industry|at|ref,score,why;ref,score,why...`: each text part escaped
 * (`reviewText`), `at` in base 36 epoch ms when it was an ISO time (else `=` and the text), each reason with its
 * usual phrases as one character each (`packWhy`). The item as written names each candidate by its stored
 * (escaped) slug; the write script puts the candidate's reference in its place (`cand_ref`), under which the
 * candidate's report details are kept once for every item naming it.
 */
interface StoredReview {
  name: string | null | undefined;
  country: string | null | undefined;
  industry: string | null | undefined;
  at: string;
  candidates: { ref: string; score: number | null | undefined; why: string | undefined }[];
}

/** `false` stands for a field that was not there (undefined), so that it reads back absent, not null. */
const absent = z.literal(false);
const optionalText = z.union([z.string(), z.null(), absent]);
/**
 * A candidate's report, shared by the items naming it: JSON `[stored slug, name, industry, stage, geography]`.
 * The stored slug comes first: the write script compares it to tell two slugs with one reference apart.
 */
const storedCandidateSchema = z.tuple([z.string(), z.string(), optionalText, optionalText, optionalText]);

/** Text in a review item: undefined is empty, null `~`, the empty string `%`; `%|,;~` and control characters escaped. */
function reviewText(value: string | null | undefined): string {
  if (value === undefined) return '';
  if (value === null) return '~';
  if (value === '') return '%';
  return value.replace(
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are escaped so that they can stand for phrases
    /[%|,;~\x00-\x1f]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
  );
}

function readReviewText(part: string): string | null | undefined {
  if (part === '') return undefined;
  if (part === '~') return null;
  if (part === '%') return '';
  return part.replace(/%([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/**
 * What the matcher's reasons are made of (matching/decide.ts, matching/similarity.ts). A stored reason keeps
 * each as one control character, the phrase's place in this list plus one: append only, never reorder, or
 * stored items would read as other words. A reason that no longer uses a phrase is merely stored longer.
 */
const WHY_PHRASES = [
  'same name written with different spacing',
  'same words in a different order',
  'name differs by a small spelling difference',
  'one name is the other with words added or changed',
  'one name is the initials of the other',
  'same name',
  'same ',
  'country',
  'city',
  'industry',
  'in another city',
  'in another industry',
  ', the record says ',
  ", where the record's domain ends",
  ", the record's domain ends in ",
  ", where the record's legal form is used",
  "spells the record's domain",
  '; ',
  'in ',
] as const;
/** The phrases as they read in escaped text, longest first so that the longer one wins where both start. */
const ESCAPED_PHRASES = WHY_PHRASES.map((phrase, i) => ({
  text: reviewText(phrase),
  code: String.fromCharCode(i + 1),
}));
const PHRASE_PATTERN = new RegExp(
  [...ESCAPED_PHRASES]
    .sort((a, b) => b.text.length - a.text.length)
    .map((p) => p.text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('|'),
  'g',
);
const CODE_OF = new Map(ESCAPED_PHRASES.map((p) => [p.text, p.code]));
const PHRASE_OF = new Map(ESCAPED_PHRASES.map((p) => [p.code, p.text]));

function packWhy(why: string | undefined): string {
  const text = reviewText(why);
  return text === '%' ? text : text.replace(PHRASE_PATTERN, (m) => CODE_OF.get(m) ?? m);
}

function readWhy(part: string): string | undefined {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: a phrase's code
  const text = part.replace(/[\x01-\x1f]/g, (c) => PHRASE_OF.get(c) ?? c);
  return readReviewText(text) ?? undefined;
}

function kept<T>(value: T | undefined): T | false {
  return value === undefined ? false : value;
}

function given<T>(value: T | false): T | undefined {
  return value === false ? undefined : value;
}

function storeReview(item: ReviewItem): { item: string; candidates: string } {
  const at = new Date(item.at);
  const stamp =
    !Number.isNaN(at.getTime()) && at.toISOString() === item.at
      ? at.getTime().toString(36)
      : `=${reviewText(item.at)}`;
  const candidates = item.candidates
    .map((c) => {
      const score = c.score === undefined ? '' : c.score === null ? '~' : String(c.score);
      return `${storedCandidateSlug(c.slug)},${score},${packWhy(c.why)}`;
    })
    .join(';');
  const stored = [
    reviewText(item.name),
    reviewText(item.country),
    reviewText(item.industry),
    stamp,
    candidates,
  ];
  const details = Object.fromEntries(
    item.candidates.map((c) => {
      const slug = storedCandidateSlug(c.slug);
      return [
        slug,
        JSON.stringify([slug, c.name, kept(c.industry), kept(c.stage), kept(c.geography)] satisfies z.infer<
          typeof storedCandidateSchema
        >),
      ];
    }),
  );
  return { item: stored.join('|'), candidates: JSON.stringify(details) };
}

/** A candidate's slug as the item keeps it: `|` and `%` escaped as in the state, `,` and `;` too. */
function storedCandidateSlug(slug: string): string {
  return escapePart(slug).replace(/[,;]/g, (ch) => (ch === ',' ? '%2C' : '%3B'));
}

function plainCandidateSlug(stored: string): string {
  return unescapePart(stored.replace(/%2C/g, ',').replace(/%3B/g, ';'));
}

function parseReview(value: string): StoredReview | null {
  const parts = value.split('|');
  if (parts.length !== 5) return null;
  const [name = '', country = '', industry = '', stamp = '', candidates = ''] = parts;
  const at = stamp.startsWith('=')
    ? readReviewText(stamp.slice(1))
    : new Date(Number.parseInt(stamp, 36)).toISOString();
  if (typeof at !== 'string') return null;
  return {
    name: readReviewText(name),
    country: readReviewText(country),
    industry: readReviewText(industry),
    at,
    candidates: candidates
      .split(';')
      .filter((c) => c !== '')
      .map((c) => {
        const [ref = '', score = '', why = ''] = c.split(',');
        return {
          ref,
          score: score === '' ? undefined : score === '~' ? null : Number(score),
          why: readWhy(why),
        };
      }),
  };
}

/** A candidate whose details are gone (which a write never leaves) cannot be named, so it is left out. */
function unpackReview(
  recordId: string,
  stored: StoredReview,
  detailsOf: ReadonlyMap<string, z.infer<typeof storedCandidateSchema> | null>,
): ReviewItem {
  return stripUndefined({
    recordId,
    name: stored.name ?? null,
    country: stored.country,
    industry: stored.industry,
    candidates: stored.candidates.flatMap(({ ref, score, why }) => {
      const details = detailsOf.get(ref);
      if (!details) return [];
      const [slug, cName, cIndustry, stage, geography] = details;
      return [
        stripUndefined({
          slug: plainCandidateSlug(slug),
          name: cName,
          industry: given(cIndustry),
          stage: given(stage),
          geography: given(geography),
          score,
          why,
        }),
      ];
    }),
    at: stored.at,
  });
}

/** Leaves out the keys whose value is undefined, as the JSON it was read from did. */
function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

export function fingerprintOf(record: {
  name: string | null;
  domain: string | null;
  fields: { slug?: unknown };
}): Fingerprint {
  return {
    name: record.name ?? '',
    domain: record.domain ?? '',
    slug: typeof record.fields.slug === 'string' ? record.fields.slug : '',
  };
}

export function sameFingerprint(a: FingerprintDigest, b: FingerprintDigest): boolean {
  return a.name === b.name && a.domain === b.domain && a.slug === b.slug;
}
