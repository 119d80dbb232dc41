import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { RedisClient } from '../redis.js';
import type { ReportClient } from '../reports/client.js';
import { ReportNotFoundError } from '../reports/errors.js';
import { type Report, reportSchema, type SearchHit, searchHitSchema } from '../reports/schemas.js';
import type { Keys } from '../storage/keys.js';
import { LuaScript } from '../storage/lua-script.js';
import { searchChangeSeq, slugChangeSeq } from '../storage/slug-changes.js';
import { parseStoredJson } from '../util/json.js';

/**
 * Reads reports for the pipeline through one report cache per report key (REPORT_CACHE_SECONDS): a read (a 200
 * or a 404; errors are never kept) serves every run, preview and job reading with the same key, and the retry of
 * a killed batch, until the service says the report changed or the bound passes. Every read carries a sequence
 * number from one Redis counter, taken before the request; a change event takes one too (storage/slug-changes.ts),
 * so a kept read older than the slug's last change is never served: an event-driven update reads anew. A write
 * made from an older read never overwrites one made from a newer read (enrich-batch.ts compares them).
 *
 * A fill lock keeps two workers from reading one slug at once: the filler renews it for as long as its read
 * lasts (throttled reads waiting out `Retry-After` included) and the others wait; a filler that dies stops
 * renewing and its lock lapses within `fillLockMs`. Searches are kept the same way, stale once any of their
 * hits changed or any report was published since.
 *
 * Partitioned by the client's key identity (a digest of the key and the service's address): a sandbox key's
 * fixtures never answer a live key, and a revoked key reads nobody's answers but its own.
 */

export type ReadReport =
  | { kind: 'report'; report: Report; seq: number }
  | { kind: 'not_published'; seq: number };

/** A kept read: the read, and when (epoch ms) its request started. */
const cachedSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('report'), report: z.unknown(), seq: z.number(), at: z.number() }),
  z.object({ kind: z.literal('not_published'), seq: z.number(), at: z.number() }),
]);

const searchedSchema = z.object({ seq: z.number(), at: z.number(), hits: z.array(searchHitSchema) });

/** REPORT_CACHE_SECONDS when nobody says otherwise. */
export const DEFAULT_REPORT_CACHE_SECONDS = 600;
const FILL_LOCK_MS = 15_000;
/** A waiter gives up on a filler that is alive but slower than this, and reads the report itself. */
const FILL_WAIT_MAX_MS = 5 * 60_000;

const RENEW = LuaScript.load('lock-renew');
const renewReply = z.enum(['renewed', 'lost']);
const RELEASE = LuaScript.load('locks-release');
const releaseReply = z.number();

export interface ReportReaderOptions {
  /** The fill lock's lifetime without renewal (tests shorten it). */
  fillLockMs?: number;
  /** How long a read or search is kept (REPORT_CACHE_SECONDS); 0 keeps nothing. */
  cacheSeconds?: number;
  /**
   * Epoch ms: nothing kept from a request started earlier is served (a reconcile reads every report anew once
   * per run, yet the retry of its killed batch reads nothing its first attempt read).
   */
  readSince?: number;
}

export class ReportReader {
  private readonly fillLockMs: number;
  private readonly cacheSeconds: number;
  private readonly keyId: string;
  private readonly readSince: number;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly client: ReportClient,
    options: ReportReaderOptions = {},
  ) {
    this.fillLockMs = options.fillLockMs ?? FILL_LOCK_MS;
    this.cacheSeconds = Math.floor(options.cacheSeconds ?? DEFAULT_REPORT_CACHE_SECONDS);
    this.keyId = client.keyIdentity;
    this.readSince = options.readSince ?? 0;
  }

  async nextSeq(): Promise<number> {
    return this.redis.incr(this.keys.reportSeq());
  }

  /**
   * The report as kept for this key when it was read after the slug's last change, else read now (and kept).
   * `fresh`: read now whatever is kept (a person's decision just named the slug). Errors other than 404 are
   * thrown for the caller to classify.
   */
  async read(slug: string, options: { fresh?: boolean } = {}): Promise<ReadReport> {
    if (this.cacheSeconds <= 0) return this.fetch(slug);
    const key = this.keys.reportCached(this.keyId, slug);
    const lockKey = this.keys.reportCacheFill(this.keyId, slug);
    const token = randomUUID();
    if (!options.fresh) {
      const kept = await this.current(key, slug);
      if (kept) return kept;
      if ((await this.redis.set(lockKey, token, 'PX', this.fillLockMs, 'NX')) !== 'OK') {
        const filled = await this.waitForFill(key, lockKey, slug);
        if (filled) return filled;
      }
    }
    // Renewed while the read lasts: a read that waits out a 429's Retry-After (up to 30 s, three times) must
    // not let the lock lapse, or a waiter reads the same slug too.
    const renew = setInterval(() => {
      RENEW.run(this.redis, [lockKey], [token, this.fillLockMs], renewReply).catch(() => undefined);
    }, this.fillLockMs / 3);
    try {
      const at = Date.now();
      const result = await this.fetch(slug);
      await this.redis.set(key, JSON.stringify({ ...result, at }), 'EX', this.cacheSeconds);
      return result;
    } finally {
      clearInterval(renew);
      await RELEASE.run(this.redis, [lockKey], [token], releaseReply);
    }
  }

  /**
   * The service's hits for `q`, kept like reads: many records with one name, and every later run within the
   * bound, cost one search. Hits that are whole reports are kept as reads of those reports (as of the search).
   */
  async search(q: string, limit: number): Promise<SearchHit[]> {
    const key = this.keys.searchCached(this.keyId, q, limit);
    if (this.cacheSeconds > 0) {
      const kept = parseStoredJson(searchedSchema, await this.redis.get(key));
      const hitSlugs = kept ? kept.hits.map((h) => h.slug) : [];
      if (
        kept &&
        kept.at >= this.readSince &&
        kept.seq > (await searchChangeSeq(this.redis, this.keys, hitSlugs))
      )
        return kept.hits;
    }
    const at = Date.now();
    const seq = await this.nextSeq();
    const { hits } = await this.client.search({ q, limit });
    if (this.cacheSeconds <= 0) return hits;
    await this.redis.set(key, JSON.stringify({ seq, at, hits }), 'EX', this.cacheSeconds);
    for (const hit of hits) {
      const full = reportSchema.safeParse(hit);
      // As good as reading it: it saves a read later. Never over a read of its own (NX).
      if (full.success) await this.keep(full.data, seq, at);
    }
    return hits;
  }

  private async keep(report: Report, seq: number, at: number): Promise<void> {
    const entry = { kind: 'report', report, seq, at };
    const key = this.keys.reportCached(this.keyId, report.slug);
    await this.redis.set(key, JSON.stringify(entry), 'EX', this.cacheSeconds, 'NX');
  }

  private async fetch(slug: string): Promise<ReadReport> {
    const seq = await this.nextSeq();
    try {
      return { kind: 'report', report: await this.client.getReport(slug), seq };
    } catch (err) {
      if (err instanceof ReportNotFoundError) return { kind: 'not_published', seq };
      throw err;
    }
  }

  /** The kept read of `slug`, unless the service said the report changed after it was read. */
  private async current(key: string, slug: string): Promise<ReadReport | null> {
    const [raw, changed] = await Promise.all([
      this.redis.get(key),
      slugChangeSeq(this.redis, this.keys, slug),
    ]);
    const parsed = parseStoredJson(cachedSchema, raw);
    if (!parsed || parsed.seq <= changed || parsed.at < this.readSince) return null;
    if (parsed.kind === 'not_published') return parsed;
    const report = reportSchema.safeParse(parsed.report);
    return report.success ? { kind: 'report', report: report.data, seq: parsed.seq } : null;
  }

  /** Waits while the filler holds the lock (it renews it while alive); null: read it yourself. */
  private async waitForFill(key: string, lockKey: string, slug: string): Promise<ReadReport | null> {
    const deadline = Date.now() + FILL_WAIT_MAX_MS;
    while (Date.now() < deadline) {
      await sleep(25);
      const kept = await this.current(key, slug);
      if (kept) return kept;
      // The filler failed or died: fetch ourselves.
      if (!(await this.redis.exists(lockKey))) return null;
    }
    return null;
  }
}
