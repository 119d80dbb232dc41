import { z } from 'zod';
import type { RedisClient } from '../redis.js';
import { parseStoredJson } from '../util/json.js';
import type { Keys } from './keys.js';
import { getLinearHashFields, linearHashSize, scanLinearHash } from './linear-hash.js';
import { LuaScript } from './lua-script.js';
import { parseReview, type ReviewItem, storedCandidateSchema, unpackReview } from './review-codec.js';
import { rangeOf } from './status-counts.js';

/**
 * The records waiting for a person's review, with the candidates offered for each, and the slugs a person
 * rejected for a record (never offered again). Items are written with their record's state by the link index
 * (link-apply.lua, so that a record and its item never disagree); this module reads them and keeps the
 * rejections, which no sync can rebuild.
 */

const rejectedSlugsSchema = z.array(z.string());

const HSET_IF_INSTALLED = LuaScript.load('hset-if-installed');
const hsetIfInstalledReply = z.enum(['set', 'gone']);

export class ReviewQueue {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  /** Every item of the installation, by the record's name. */
  async items(installationId: string): Promise<ReviewItem[]> {
    const raw = new Map<string, string>();
    await scanLinearHash(this.redis, this.keys.review(installationId), (recordId, value) => {
      raw.set(recordId, value);
      return true;
    });
    const items = await this.read(installationId, [...raw]);
    return items.filter((r) => r !== null).sort((a, b) => (a.name ?? '').localeCompare(b.name ?? ''));
  }

  /**
   * The items from position `offset` in the map's bucket order (an indexed range: the buckets before it are
   * counted, not read), by name within the page, and how many there are.
   */
  async page(
    installationId: string,
    offset: number,
    count: number,
  ): Promise<{ total: number; items: ReviewItem[] }> {
    const { total, entries } = await rangeOf(this.redis, this.keys.review(installationId), offset, count);
    const items = (await this.read(installationId, entries)).filter((r) => r !== null);
    return { total, items: items.sort((a, b) => (a.name ?? '').localeCompare(b.name ?? '')) };
  }

  /**
   * Items whose record id is `query` or whose name holds it (any case): up to `limit` of them and how many
   * match. Reads the whole queue, a page of buckets at a time.
   */
  async search(
    installationId: string,
    query: string,
    limit: number,
  ): Promise<{ total: number; items: ReviewItem[] }> {
    const needle = query.toLowerCase();
    const exact = await this.item(installationId, query);
    const found = new Map<string, ReviewItem>();
    if (exact) found.set(exact.recordId, exact);
    let total = exact ? 1 : 0;
    const raw: [string, string][] = [];
    await scanLinearHash(this.redis, this.keys.review(installationId), (recordId, value) => {
      raw.push([recordId, value]);
      return true;
    });
    const seen = new Set<string>(found.keys());
    for (let i = 0; i < raw.length; i += 500) {
      for (const item of await this.read(installationId, raw.slice(i, i + 500))) {
        if (!item || seen.has(item.recordId)) continue;
        seen.add(item.recordId);
        if (!(item.name ?? '').toLowerCase().includes(needle)) continue;
        total += 1;
        if (found.size < limit) found.set(item.recordId, item);
      }
    }
    return { total, items: [...found.values()] };
  }

  async item(installationId: string, recordId: string): Promise<ReviewItem | null> {
    const [item = null] = await this.itemsOf(installationId, [recordId]);
    return item;
  }

  /** The items of these records, in their order; null where a record is not waiting for review. */
  async itemsOf(installationId: string, recordIds: readonly string[]): Promise<(ReviewItem | null)[]> {
    if (recordIds.length === 0) return [];
    const raw = await getLinearHashFields(this.redis, this.keys.review(installationId), recordIds);
    return this.read(
      installationId,
      recordIds.map((id, i) => [id, raw[i] ?? null]),
    );
  }

  async count(installationId: string): Promise<number> {
    return linearHashSize(this.redis, this.keys.review(installationId));
  }

  /** Slugs a person rejected for this record: never offered again. */
  async rejectedSlugs(installationId: string, recordId: string): Promise<Set<string>> {
    const raw = await this.redis.hget(this.keys.rejected(installationId), recordId);
    return new Set(parseStoredJson(rejectedSlugsSchema, raw) ?? []);
  }

  /** Kept only while the installation exists (hset-if-installed.lua). */
  async addRejectedSlugs(installationId: string, recordId: string, slugs: string[]): Promise<void> {
    const rejected = await this.rejectedSlugs(installationId, recordId);
    for (const slug of slugs) rejected.add(slug);
    await HSET_IF_INSTALLED.run(
      this.redis,
      [this.keys.installation(installationId), this.keys.rejected(installationId)],
      [recordId, JSON.stringify([...rejected])],
      hsetIfInstalledReply,
    );
  }

  /** Takes back slugs rejected by a decision that was undone: they may be offered again. */
  async removeRejectedSlugs(
    installationId: string,
    recordId: string,
    slugs: readonly string[],
  ): Promise<void> {
    const rejected = await this.rejectedSlugs(installationId, recordId);
    for (const slug of slugs) rejected.delete(slug);
    if (rejected.size === 0) {
      await this.redis.hdel(this.keys.rejected(installationId), recordId);
      return;
    }
    await HSET_IF_INSTALLED.run(
      this.redis,
      [this.keys.installation(installationId), this.keys.rejected(installationId)],
      [recordId, JSON.stringify([...rejected])],
      hsetIfInstalledReply,
    );
  }

  private async read(
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
