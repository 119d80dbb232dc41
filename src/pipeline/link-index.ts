import type { Redis } from 'ioredis';
import { z } from 'zod';
import { MATCH_STATUSES, type MatchStatus } from '../fields.js';
import type { Keys } from './keys.js';

/**
 * What the connector remembers about each record besides the CRM itself: which slug it is linked to (and the
 * reverse, for fan-out), its match status and score (for the admin page without CRM calls), whether the
 * connector made the link itself, and the review candidates. Everything here can be rebuilt from the CRM by a
 * full sync: the record's `report_slug` is the source of truth.
 */

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
  fingerprint: string;
}

export class LinkIndex {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
  ) {}

  /** Applies the state of many records in one round trip; moving a record between slugs is atomic. */
  async apply(installationId: string, states: RecordState[]): Promise<void> {
    if (states.length === 0) return;
    const k = this.keys;
    const previous = await this.redis.hmget(k.recordSlug(installationId), ...states.map((s) => s.recordId));
    const tx = this.redis.multi();
    states.forEach((s, i) => {
      const before = previous[i] ?? null;
      if (before && before !== s.slug) tx.srem(k.slugMembers(installationId, before), s.recordId);
      if (s.slug) {
        tx.hset(k.recordSlug(installationId), s.recordId, s.slug);
        tx.sadd(k.slugMembers(installationId, s.slug), s.recordId);
        tx.sadd(k.slugInstallations(s.slug), installationId);
      } else {
        tx.hdel(k.recordSlug(installationId), s.recordId);
      }
      if (s.status) tx.hset(k.recordStatus(installationId), s.recordId, s.status);
      else tx.hdel(k.recordStatus(installationId), s.recordId);
      if (s.score !== null) tx.hset(k.recordScore(installationId), s.recordId, String(s.score));
      else tx.hdel(k.recordScore(installationId), s.recordId);
      if (s.autoLinked && s.slug) tx.hset(k.autoLinks(installationId), s.recordId, s.slug);
      else tx.hdel(k.autoLinks(installationId), s.recordId);
      if (s.unlinkedName) tx.hset(k.unlinked(installationId), s.recordId, s.unlinkedName);
      else tx.hdel(k.unlinked(installationId), s.recordId);
      if (s.review) tx.hset(k.review(installationId), s.recordId, JSON.stringify(s.review));
      else tx.hdel(k.review(installationId), s.recordId);
      tx.hset(k.seen(installationId), s.recordId, s.fingerprint);
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

  async autoLinkOf(installationId: string, recordId: string): Promise<string | null> {
    return this.redis.hget(this.keys.autoLinks(installationId), recordId);
  }

  async autoLinksOf(installationId: string, recordIds: string[]): Promise<(string | null)[]> {
    if (recordIds.length === 0) return [];
    return this.redis.hmget(this.keys.autoLinks(installationId), ...recordIds);
  }

  async fingerprints(installationId: string, recordIds: string[]): Promise<(string | null)[]> {
    if (recordIds.length === 0) return [];
    return this.redis.hmget(this.keys.seen(installationId), ...recordIds);
  }

  async unlinkedNames(installationId: string): Promise<Map<string, string>> {
    return new Map(Object.entries(await this.redis.hgetall(this.keys.unlinked(installationId))));
  }

  async reviewItems(installationId: string): Promise<ReviewItem[]> {
    const raw = await this.redis.hgetall(this.keys.review(installationId));
    return Object.values(raw)
      .map((v) => reviewItemSchema.safeParse(JSON.parse(v)))
      .filter((r) => r.success)
      .map((r) => r.data)
      .sort((a, b) => (a.name ?? '').localeCompare(b.name ?? ''));
  }

  async reviewItem(installationId: string, recordId: string): Promise<ReviewItem | null> {
    const raw = await this.redis.hget(this.keys.review(installationId), recordId);
    if (!raw) return null;
    const parsed = reviewItemSchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : null;
  }

  async coverage(installationId: string): Promise<Record<MatchStatus, number>> {
    const counts = Object.fromEntries(MATCH_STATUSES.map((s) => [s, 0])) as Record<MatchStatus, number>;
    const statuses = await this.redis.hvals(this.keys.recordStatus(installationId));
    for (const s of statuses) if (s in counts) counts[s as MatchStatus] += 1;
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
}): string {
  return JSON.stringify([
    record.name ?? '',
    record.domain ?? '',
    typeof record.fields.slug === 'string' ? record.fields.slug : '',
  ]);
}
