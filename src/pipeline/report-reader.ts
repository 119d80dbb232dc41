import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { RedisClient } from '../redis.js';
import type { ReportClient } from '../reports/client.js';
import { ReportNotFoundError } from '../reports/errors.js';
import { type Report, reportSchema, type SearchHit, searchHitSchema } from '../reports/schemas.js';
import type { Keys } from '../storage/keys.js';
import { LuaScript } from '../storage/lua-script.js';
import { slugChangeSeq } from '../storage/slug-changes.js';
import { parseStoredJson } from '../util/json.js';

/**
 * Reads reports for the pipeline. Within one run a slug is read once, however many records and workers want
 * it (a Redis entry per run, with a fill lock so two workers do not both fetch: the filler keeps the lock
 * alive for as long as its read lasts, throttled reads waiting out `Retry-After` included, and the others
 * wait while it does; a filler that dies stops renewing and its lock lapses within `fillLockMs`). Every read carries a
 * sequence number from one Redis counter, taken before the request: a write made from an older read never
 * overwrites a write made from a newer one (enrich-batch.ts compares them). Search results are kept per run
 * the same way: many records with one name cost one search.
 */

export type ReadReport =
  | { kind: 'report'; report: Report; seq: number }
  | { kind: 'not_published'; seq: number };

const cachedSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('report'), report: z.unknown(), seq: z.number() }),
  z.object({ kind: z.literal('not_published'), seq: z.number() }),
]);

const searchHitsSchema = z.array(searchHitSchema);

const RUN_CACHE_TTL_SECONDS = 24 * 3600;
const FILL_LOCK_MS = 15_000;
/** A waiter gives up on a filler that is alive but slower than this, and reads the report itself. */
const FILL_WAIT_MAX_MS = 5 * 60_000;

const RENEW = LuaScript.load('lock-renew');
const RELEASE = LuaScript.load('locks-release');

export interface ReportReaderOptions {
  /** The fill lock's lifetime without renewal (tests shorten it). */
  fillLockMs?: number;
}

export class ReportReader {
  private readonly fillLockMs: number;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly client: ReportClient,
    options: ReportReaderOptions = {},
  ) {
    this.fillLockMs = options.fillLockMs ?? FILL_LOCK_MS;
  }

  async nextSeq(): Promise<number> {
    return this.redis.incr(this.keys.reportSeq());
  }

  /**
   * The report as read in this run, or a fresh read when `runId` is null or `fresh` is set (a webhook says
   * it changed). Errors other than 404 are thrown for the caller to classify.
   */
  async read(slug: string, runId: string | null, options: { fresh?: boolean } = {}): Promise<ReadReport> {
    if (runId === null) return this.fetch(slug);
    const key = this.keys.runReport(runId, slug);
    const lockKey = this.keys.runReportFill(runId, slug);
    const token = randomUUID();
    if (!options.fresh) {
      const cached = await this.cached(key);
      // A run's copy older than the service's last change event is stale: it is read again and replaced.
      if (cached && cached.seq > (await slugChangeSeq(this.redis, this.keys, slug))) return cached;
      if (!cached && (await this.redis.set(lockKey, token, 'PX', this.fillLockMs, 'NX')) !== 'OK') {
        const filled = await this.waitForFill(key, lockKey);
        if (filled) return filled;
      }
    }
    // Renewed while the read lasts: a read that waits out a 429's Retry-After (up to 30 s, three times) must
    // not let the lock lapse, or a waiter reads the same slug too.
    const renew = setInterval(() => {
      RENEW.run(this.redis, [lockKey], [token, this.fillLockMs], z.enum(['renewed', 'lost'])).catch(
        () => undefined,
      );
    }, this.fillLockMs / 3);
    try {
      const result = await this.fetch(slug);
      await this.store(runId, key, JSON.stringify(result));
      return result;
    } finally {
      clearInterval(renew);
      await RELEASE.run(this.redis, [lockKey], [token], z.number());
    }
  }

  /** One search per distinct query per run; a null run searches every time. */
  async search(q: string, limit: number, runId: string | null): Promise<SearchHit[]> {
    const key = runId === null ? null : this.keys.runSearch(runId, q);
    if (key) {
      const cached = parseStoredJson(searchHitsSchema, await this.redis.get(key));
      if (cached) return cached;
    }
    const { hits } = await this.client.search({ q, limit });
    if (key && runId !== null) await this.store(runId, key, JSON.stringify(hits));
    return hits;
  }

  /** Search results that are whole reports count as reads of those reports for this run. */
  async remember(runId: string | null, report: Report): Promise<void> {
    if (runId === null) return;
    const seq = await this.nextSeq();
    const entry: ReadReport = { kind: 'report', report, seq };
    await this.store(runId, this.keys.runReport(runId, report.slug), JSON.stringify(entry), {
      onlyNew: true,
    });
  }

  /**
   * One cache entry of a run, and its name in the run's list of entries (`dropRunCaches` empties both when the
   * run is done). One transaction: every key of a run shares its hash tag, so this is one slot on a cluster.
   */
  private async store(runId: string, key: string, value: string, options: { onlyNew?: boolean } = {}) {
    const index = this.keys.runCached(runId);
    const tx = this.redis.multi();
    if (options.onlyNew) tx.set(key, value, 'EX', RUN_CACHE_TTL_SECONDS, 'NX');
    else tx.set(key, value, 'EX', RUN_CACHE_TTL_SECONDS);
    await tx.sadd(index, key).expire(index, RUN_CACHE_TTL_SECONDS).exec();
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

  private async cached(key: string): Promise<ReadReport | null> {
    const parsed = parseStoredJson(cachedSchema, await this.redis.get(key));
    if (!parsed) return null;
    if (parsed.kind === 'not_published') return parsed;
    const report = reportSchema.safeParse(parsed.report);
    return report.success ? { kind: 'report', report: report.data, seq: parsed.seq } : null;
  }

  /** Waits while the filler holds the lock (it renews it while alive); null: read it yourself. */
  private async waitForFill(key: string, lockKey: string): Promise<ReadReport | null> {
    const deadline = Date.now() + FILL_WAIT_MAX_MS;
    while (Date.now() < deadline) {
      await sleep(25);
      const cached = await this.cached(key);
      if (cached) return cached;
      // The filler failed or died: fetch ourselves.
      if (!(await this.redis.exists(lockKey))) return null;
    }
    return null;
  }
}
