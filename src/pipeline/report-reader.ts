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
 * renewing and its lock lapses within `fillLockMs`. Searches are kept and filled the same way, stale once any
 * of their hits changed or any report was published since.
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
/**
 * Renewed every third of it while the request lasts. Short, because a killed filler's waiters wait it out (a
 * worker killed every few seconds held events for a hot report up to 15 s); a lapse under a stalled event loop
 * costs one duplicate request, never a wrong read.
 */
const FILL_LOCK_MS = 4_500;
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
    const fill = async () => {
      const at = Date.now();
      const result = await this.fetch(slug);
      await this.redis.set(key, JSON.stringify({ ...result, at }), 'EX', this.cacheSeconds);
      return result;
    };
    // A person's decision just named the slug: read it now, whatever is kept or being read.
    if (options.fresh) return fill();
    return this.once(this.keys.reportCacheFill(this.keyId, slug), () => this.current(key, slug), fill);
  }

  /**
   * The service's hits for `q`, kept like reads: many records with one name, and every later run within the
   * bound, cost one search, and two workers searching one name at once search it once.
   * Hits that are whole reports are kept as reads of those reports (as of the search).
   */
  async search(q: string, limit: number): Promise<SearchHit[]> {
    if (this.cacheSeconds <= 0) return (await this.client.search({ q, limit })).hits;
    const key = this.keys.searchCached(this.keyId, q, limit);
    const kept = async () => {
      const searched = parseStoredJson(searchedSchema, await this.redis.get(key));
      if (!searched || searched.at < this.readSince) return null;
      const hitSlugs = searched.hits.map((h) => h.slug);
      return searched.seq > (await searchChangeSeq(this.redis, this.keys, hitSlugs)) ? searched.hits : null;
    };
    const fill = async () => {
      const at = Date.now();
      const seq = await this.nextSeq();
      const { hits } = await this.client.search({ q, limit });
      await this.redis.set(key, JSON.stringify({ seq, at, hits }), 'EX', this.cacheSeconds);
      for (const hit of hits) {
        const full = reportSchema.safeParse(hit);
        // As good as reading it: it saves a read later. Never over a read of its own (NX).
        if (full.success) await this.keep(full.data, seq, at);
      }
      return hits;
    };
    return this.once(this.keys.searchCacheFill(this.keyId, q, limit), kept, fill);
  }

  /**
   * What is kept, else `fill` by one worker at a time: the one that takes the fill lock fills, renewing the lock
   * while its request lasts (a read that waits out a 429's Retry-After, up to 30 s three times, must not let it
   * lapse, or a waiter requests the same thing too); the others wait for what it keeps.
   */
  private async once<T>(lockKey: string, kept: () => Promise<T | null>, fill: () => Promise<T>): Promise<T> {
    const found = await kept();
    if (found) return found;
    const token = randomUUID();
    if ((await this.redis.set(lockKey, token, 'PX', this.fillLockMs, 'NX')) !== 'OK') {
      const filled = await this.waitForFill(lockKey, kept);
      if (filled) return filled;
    }
    const renew = setInterval(() => {
      RENEW.run(this.redis, [lockKey], [token, this.fillLockMs], renewReply).catch(() => undefined);
    }, this.fillLockMs / 3);
    try {
      return await fill();
    } finally {
      clearInterval(renew);
      await RELEASE.run(this.redis, [lockKey], [token], releaseReply);
    }
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

  /** Waits while the filler holds the lock (it renews it while alive); null: fill it yourself. */
  private async waitForFill<T>(lockKey: string, kept: () => Promise<T | null>): Promise<T | null> {
    const deadline = Date.now() + FILL_WAIT_MAX_MS;
    while (Date.now() < deadline) {
      await sleep(25);
      const found = await kept();
      if (found) return found;
      // The lock is gone: the filler kept its read first, unless it failed or died (then fill it yourself). Looked
      // for again, since the filler may have kept it and let go between the two looks above.
      if (!(await this.redis.exists(lockKey))) return kept();
    }
    return null;
  }
}
