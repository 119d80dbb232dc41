import { z } from 'zod';
import { MATCH_STATUSES, type MatchStatus } from '../fields.js';
import type { RedisClient } from '../redis.js';
import { parseStoredJson } from '../util/json.js';
import type { Keys } from './keys.js';

/**
 * What the connector remembers about each record besides the CRM itself: which slug it is linked to (and the
 * reverse, for fan-out), its match status and score (for the admin page without CRM calls), whether the
 * connector made the link itself, the review candidates and the ones a person rejected, the fingerprint the
 * change poll compares (and where that poll stopped), and the report sequence last written. This module is the
 * only one that reads or writes those keys. Everything here but the rejections can be rebuilt from the CRM by
 * a full sync: the record's `report_slug` is the source of truth.
 */

const matchStatusSchema = z.enum(MATCH_STATUSES);
/** Stored as a JSON array `[name, domain, slug]`; the order is the stored format, kept as it was. */
const storedFingerprintSchema = z.tuple([z.string(), z.string(), z.string()]);
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
  /** The record's domain and country, kept while the link is the connector's own. */
  place?: LinkPlace;
}

export interface LinkPlace {
  domain: string | null;
  country: string | null;
}

/** The records the connector itself linked to one report, with their places as they were when linked. */
export interface AutoLinkGroup {
  slug: string;
  records: Array<{ recordId: string } & LinkPlace>;
}

const storedPlaceSchema = z.tuple([z.string().nullable(), z.string().nullable()]);

/** What the change poll compares to tell a rename or a hand-set slug from the connector's own writes. */
export interface Fingerprint {
  name: string;
  domain: string;
  slug: string;
}

/** Where the change poll stopped; `since` is the time of the first poll (epoch ms). */
export interface PollCursor {
  cursor: string;
  since: number;
}

export class LinkIndex {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  /** Applies the state of many records in one round trip; moving a record between slugs is atomic. */
  async apply(installationId: string, states: RecordState[]): Promise<void> {
    if (states.length === 0) return;
    const k = this.keys;
    const previous = await this.redis.hmget(k.recordSlug(installationId), ...states.map((s) => s.recordId));
    // The slug -> installations index is global (one key per slug, any slot), so it is written before the
    // installation's own transaction rather than in it: a fan-out between the two finds this installation
    // with no record on the slug yet, never a linked record missing from the index.
    const linkedSlugs = [...new Set(states.flatMap((s) => (s.slug ? [s.slug] : [])))];
    await Promise.all(linkedSlugs.map((slug) => this.redis.sadd(k.slugInstallations(slug), installationId)));
    const tx = this.redis.multi();
    states.forEach((s, i) => {
      const before = previous[i] ?? null;
      if (before && before !== s.slug) tx.srem(k.slugMembers(installationId, before), s.recordId);
      if (s.slug) {
        tx.hset(k.recordSlug(installationId), s.recordId, s.slug);
        tx.sadd(k.slugMembers(installationId, s.slug), s.recordId);
      } else {
        tx.hdel(k.recordSlug(installationId), s.recordId);
      }
      if (s.status) tx.hset(k.recordStatus(installationId), s.recordId, s.status);
      else tx.hdel(k.recordStatus(installationId), s.recordId);
      if (s.score !== null) tx.hset(k.recordScore(installationId), s.recordId, String(s.score));
      else tx.hdel(k.recordScore(installationId), s.recordId);
      if (s.autoLinked && s.slug) tx.hset(k.autoLinks(installationId), s.recordId, s.slug);
      else tx.hdel(k.autoLinks(installationId), s.recordId);
      if (s.autoLinked && s.slug && s.place) {
        tx.hset(
          k.autoLinkPlaces(installationId),
          s.recordId,
          JSON.stringify([s.place.domain, s.place.country]),
        );
      } else {
        tx.hdel(k.autoLinkPlaces(installationId), s.recordId);
      }
      if (s.unlinkedName) tx.hset(k.unlinked(installationId), s.recordId, s.unlinkedName);
      else tx.hdel(k.unlinked(installationId), s.recordId);
      if (s.review) tx.hset(k.review(installationId), s.recordId, JSON.stringify(s.review));
      else tx.hdel(k.review(installationId), s.recordId);
      tx.hset(k.seen(installationId), s.recordId, storeFingerprint(s.fingerprint));
    });
    await tx.exec();
  }

  /** Forgets records that were deleted or merged away. */
  async forget(installationId: string, recordIds: string[]): Promise<void> {
    if (recordIds.length === 0) return;
    const k = this.keys;
    const slugs = await this.redis.hmget(k.recordSlug(installationId), ...recordIds);
    const tx = this.redis.multi();
    recordIds.forEach((id, i) => {
      const slug = slugs[i];
      if (slug) tx.srem(k.slugMembers(installationId, slug), id);
    });
    for (const hash of [
      k.recordSlug(installationId),
      k.recordStatus(installationId),
      k.recordScore(installationId),
      k.autoLinks(installationId),
      k.autoLinkPlaces(installationId),
      k.review(installationId),
      k.unlinked(installationId),
      k.seen(installationId),
      k.writtenSeq(installationId),
    ]) {
      tx.hdel(hash, ...recordIds);
    }
    await tx.exec();
  }

  async recordsForSlug(installationId: string, slug: string): Promise<string[]> {
    return (await this.redis.smembers(this.keys.slugMembers(installationId, slug))).sort();
  }

  async installationsForSlug(slug: string): Promise<string[]> {
    return (await this.redis.smembers(this.keys.slugInstallations(slug))).sort();
  }

  /** The slug each record is linked to, as last written; null where none. */
  async slugsOf(installationId: string, recordIds: string[]): Promise<(string | null)[]> {
    if (recordIds.length === 0) return [];
    return this.redis.hmget(this.keys.recordSlug(installationId), ...recordIds);
  }

  /** Records that the connector made this link itself (a merge survivor inheriting an auto-link). */
  async markAutoLink(installationId: string, recordId: string, slug: string): Promise<void> {
    await this.redis.hset(this.keys.autoLinks(installationId), recordId, slug);
  }

  /** Before an installation is removed: it no longer takes part in any slug's fan-out. */
  async forgetInstallation(installationId: string): Promise<void> {
    const slugs = new Set(await this.redis.hvals(this.keys.recordSlug(installationId)));
    for (const slug of slugs) await this.redis.srem(this.keys.slugInstallations(slug), installationId);
  }

  async autoLinkOf(installationId: string, recordId: string): Promise<string | null> {
    return this.redis.hget(this.keys.autoLinks(installationId), recordId);
  }

  /** The link is no longer the connector's own (a person set or confirmed it). */
  async dropAutoLink(installationId: string, recordId: string): Promise<void> {
    await this.redis
      .multi()
      .hdel(this.keys.autoLinks(installationId), recordId)
      .hdel(this.keys.autoLinkPlaces(installationId), recordId)
      .exec();
  }

  /** Reports the connector linked to more than one record by itself, with those records' places. */
  async sharedAutoLinks(installationId: string): Promise<AutoLinkGroup[]> {
    const [links, places] = await Promise.all([
      this.redis.hgetall(this.keys.autoLinks(installationId)),
      this.redis.hgetall(this.keys.autoLinkPlaces(installationId)),
    ]);
    const bySlug = new Map<string, AutoLinkGroup['records']>();
    for (const [recordId, slug] of Object.entries(links)) {
      const place = parseStoredJson(storedPlaceSchema, places[recordId] ?? null) ?? [null, null];
      const records = bySlug.get(slug) ?? [];
      records.push({ recordId, domain: place[0], country: place[1] });
      bySlug.set(slug, records);
    }
    return [...bySlug]
      .filter(([, records]) => records.length > 1)
      .map(([slug, records]) => ({
        slug,
        records: records.sort((a, b) => a.recordId.localeCompare(b.recordId)),
      }))
      .sort((a, b) => a.slug.localeCompare(b.slug));
  }

  async autoLinksOf(installationId: string, recordIds: string[]): Promise<(string | null)[]> {
    if (recordIds.length === 0) return [];
    return this.redis.hmget(this.keys.autoLinks(installationId), ...recordIds);
  }

  /** Slugs a person rejected for this record: never offered again. */
  async rejectedSlugs(installationId: string, recordId: string): Promise<Set<string>> {
    const raw = await this.redis.hget(this.keys.rejected(installationId), recordId);
    return new Set(parseStoredJson(rejectedSlugsSchema, raw) ?? []);
  }

  async addRejectedSlugs(installationId: string, recordId: string, slugs: string[]): Promise<void> {
    const rejected = await this.rejectedSlugs(installationId, recordId);
    for (const slug of slugs) rejected.add(slug);
    await this.redis.hset(this.keys.rejected(installationId), recordId, JSON.stringify([...rejected]));
  }

  /** The fingerprint last seen per record; null when never seen. */
  async fingerprints(installationId: string, recordIds: string[]): Promise<(Fingerprint | null)[]> {
    if (recordIds.length === 0) return [];
    const raw = await this.redis.hmget(this.keys.seen(installationId), ...recordIds);
    return raw.map((v) => {
      const tuple = parseStoredJson(storedFingerprintSchema, v);
      return tuple ? { name: tuple[0], domain: tuple[1], slug: tuple[2] } : null;
    });
  }

  async pollCursor(installationId: string): Promise<PollCursor | null> {
    const [cursor, since] = await this.redis.hmget(this.keys.pollCursor(installationId), 'cursor', 'since');
    if (!cursor || !since || !Number.isFinite(Number(since))) return null;
    return { cursor, since: Number(since) };
  }

  /** The time of the first poll, once set, stays. */
  async setPollCursor(installationId: string, cursor: PollCursor): Promise<void> {
    await this.redis.hset(this.keys.pollCursor(installationId), {
      cursor: cursor.cursor,
      since: String(cursor.since),
    });
  }

  async unlinkedNames(installationId: string): Promise<Map<string, string>> {
    return new Map(Object.entries(await this.redis.hgetall(this.keys.unlinked(installationId))));
  }

  async reviewItems(installationId: string): Promise<ReviewItem[]> {
    const raw = await this.redis.hgetall(this.keys.review(installationId));
    return Object.values(raw)
      .map((v) => parseStoredJson(reviewItemSchema, v))
      .filter((r) => r !== null)
      .sort((a, b) => (a.name ?? '').localeCompare(b.name ?? ''));
  }

  async reviewItem(installationId: string, recordId: string): Promise<ReviewItem | null> {
    return parseStoredJson(
      reviewItemSchema,
      await this.redis.hget(this.keys.review(installationId), recordId),
    );
  }

  /** The review items of these records, in their order; null where a record is not waiting for review. */
  async reviewItemsOf(installationId: string, recordIds: readonly string[]): Promise<(ReviewItem | null)[]> {
    if (recordIds.length === 0) return [];
    const raw = await this.redis.hmget(this.keys.review(installationId), ...recordIds);
    return raw.map((v) => parseStoredJson(reviewItemSchema, v));
  }

  /** The match status of each record as last written, in their order (null: not processed). */
  async statusesOf(installationId: string, recordIds: readonly string[]): Promise<(MatchStatus | null)[]> {
    if (recordIds.length === 0) return [];
    const raw = await this.redis.hmget(this.keys.recordStatus(installationId), ...recordIds);
    return raw.map((v) => {
      const parsed = matchStatusSchema.safeParse(v);
      return parsed.success ? parsed.data : null;
    });
  }

  async reviewCount(installationId: string): Promise<number> {
    return this.redis.hlen(this.keys.review(installationId));
  }

  async statusOf(installationId: string, recordId: string): Promise<MatchStatus | null> {
    const [status = null] = await this.statusesOf(installationId, [recordId]);
    return status;
  }

  /**
   * Up to `limit` records in one status with their normalised names (from the unlinked hash), for the admin
   * page's list of companies without a report. Scans the status hash in pages, never all at once.
   */
  async recordsWithStatus(
    installationId: string,
    status: MatchStatus,
    limit: number,
  ): Promise<{ recordId: string; normalizedName: string | null }[]> {
    const ids: string[] = [];
    let cursor = '0';
    do {
      const [next, flat] = await this.redis.hscan(
        this.keys.recordStatus(installationId),
        cursor,
        'COUNT',
        500,
      );
      cursor = next;
      for (let i = 0; i + 1 < flat.length && ids.length < limit; i += 2) {
        if (flat[i + 1] === status) ids.push(flat[i]!);
      }
    } while (cursor !== '0' && ids.length < limit);
    if (ids.length === 0) return [];
    const names = await this.redis.hmget(this.keys.unlinked(installationId), ...ids);
    return ids.map((recordId, i) => ({ recordId, normalizedName: names[i] ?? null }));
  }

  async coverage(installationId: string): Promise<Record<MatchStatus, number>> {
    const counts = Object.fromEntries(MATCH_STATUSES.map((s) => [s, 0])) as Record<MatchStatus, number>;
    const statuses = await this.redis.hvals(this.keys.recordStatus(installationId));
    for (const s of statuses) {
      const parsed = matchStatusSchema.safeParse(s);
      if (parsed.success) counts[parsed.data] += 1;
    }
    return counts;
  }

  async scores(installationId: string): Promise<number[]> {
    return (await this.redis.hvals(this.keys.recordScore(installationId)))
      .map(Number)
      .filter(Number.isFinite);
  }

  /** Highest report sequence already written per record (0 when none). */
  async writtenSeqs(installationId: string, recordIds: string[]): Promise<number[]> {
    if (recordIds.length === 0) return [];
    const raw = await this.redis.hmget(this.keys.writtenSeq(installationId), ...recordIds);
    return raw.map((v) => (v ? Number(v) : 0));
  }

  async setWrittenSeqs(installationId: string, seqs: Map<string, number>): Promise<void> {
    if (seqs.size === 0) return;
    await this.redis.hset(
      this.keys.writtenSeq(installationId),
      Object.fromEntries([...seqs].map(([k, v]) => [k, String(v)])),
    );
  }
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

export function sameFingerprint(a: Fingerprint, b: Fingerprint): boolean {
  return a.name === b.name && a.domain === b.domain && a.slug === b.slug;
}

function storeFingerprint(f: Fingerprint): string {
  return JSON.stringify([f.name, f.domain, f.slug] satisfies z.infer<typeof storedFingerprintSchema>);
}
