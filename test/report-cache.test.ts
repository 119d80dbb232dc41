import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readSinceOf } from '../src/pipeline/batch/report-reads.js';
import { batchJobSchema } from '../src/pipeline/batch-job.js';
import { DEFAULT_REPORT_CACHE_SECONDS, ReportReader } from '../src/pipeline/report-reader.js';
import { closeRedis, createRedis, deleteKeysWithPrefix } from '../src/redis.js';
import { ReportClient } from '../src/reports/client.js';
import { ReportUnauthorizedError } from '../src/reports/errors.js';
import { createSandbox, type ListeningSandbox, type ReportSandbox } from '../src/sandbox/index.js';
import { Keys } from '../src/storage/keys.js';
import { dropRunCaches } from '../src/storage/run-caches.js';
import { markReportPublished, markSlugChanged } from '../src/storage/slug-changes.js';
import { REDIS_URL } from './support/redis-url.js';
import { waitFor } from './support/wait.js';

/**
 * The report cache (issue 30): one per report key, shared by every run and job. A read is a 200 or a 404 and is
 * kept until the service says the report changed or REPORT_CACHE_SECONDS pass; a key never reads another's.
 */

const prefix = `rc-test-rcache-${randomUUID().slice(0, 8)}`;
const redis = createRedis(REDIS_URL, 'worker');
const keys = new Keys(prefix);
let sandbox: ReportSandbox;
let listening: ListeningSandbox;
/** A second service with the same keys: the "live" one a sandbox's fixtures must never answer for. */
let live: ReportSandbox;
let liveListening: ListeningSandbox;

beforeAll(async () => {
  sandbox = createSandbox();
  listening = await sandbox.listen(0);
  live = createSandbox();
  liveListening = await live.listen(0);
});

afterAll(async () => {
  await listening.close();
  await liveListening.close();
  await deleteKeysWithPrefix(REDIS_URL, prefix);
  await closeRedis(redis);
});

beforeEach(() => {
  sandbox.resetRequestCounts();
  live.resetRequestCounts();
});

function reader(
  apiKey = 'sk_sandbox_read',
  options: { url?: string; cacheSeconds?: number; readSince?: number } = {},
): ReportReader {
  const client = new ReportClient({ baseUrl: options.url ?? listening.url, apiKey, maxRetries: 0 });
  return new ReportReader(redis, keys, client, options);
}

function identity(apiKey: string): string {
  return new ReportClient({ baseUrl: listening.url, apiKey }).keyIdentity;
}

let next = 0;
/** A published slug no other test of this file has read. */
function freshSlug(): string {
  const published = sandbox.listReports().filter((r) => r.published);
  return published[next++ % published.length]!.slug;
}

describe('the report cache is partitioned by the report key', () => {
  it('a second key reads for itself; a second installation on the same key reads nothing', async () => {
    const slug = freshSlug();
    await reader('sk_sandbox_read').read(slug);
    await reader('sk_sandbox_read').read(slug);
    expect(sandbox.answeredReads().get(slug)).toBe(1);
    await reader('sk_sandbox_write').read(slug);
    expect(sandbox.answeredReads().get(slug)).toBe(2);
  });

  it("a sandbox's fixtures never answer for a live service, even under the same key string", async () => {
    const slug = freshSlug();
    const fixture = sandbox.getReport(slug)!.score.overall;
    live.updateReport(slug, { score: { overall: fixture + 7.25 } });
    const fromSandbox = await reader('sk_sandbox_read').read(slug);
    const fromLive = await reader('sk_sandbox_read', { url: liveListening.url }).read(slug);
    expect(fromSandbox.kind === 'report' && fromSandbox.report.score.overall).toBe(fixture);
    expect(fromLive.kind === 'report' && fromLive.report.score.overall).toBe(fixture + 7.25);
    expect(live.answeredReads().get(slug)).toBe(1);
  });

  it("a revoked key gets nothing from another key's reads, and its 401 is not kept", async () => {
    const slug = freshSlug();
    await reader('sk_sandbox_read').read(slug);
    await reader('sk_sandbox_read').search('nothing here', 5);
    for (let i = 0; i < 2; i++) {
      await expect(reader('sk_sandbox_revoked').read(slug)).rejects.toBeInstanceOf(ReportUnauthorizedError);
      await expect(reader('sk_sandbox_revoked').search('nothing here', 5)).rejects.toBeInstanceOf(
        ReportUnauthorizedError,
      );
    }
    expect(sandbox.requestCount({ key: 'sk_sandbox_revoked' })).toBe(4);
  });

  it('keeps no error: a read that failed is made again', async () => {
    const slug = freshSlug();
    sandbox.setFaults({ failShare: 1 });
    try {
      await expect(reader().read(slug)).rejects.toThrow();
    } finally {
      sandbox.clearFaults();
    }
    const read = await reader().read(slug);
    expect(read.kind).toBe('report');
    expect(sandbox.answeredReads().get(slug)).toBe(1);
  });
});

describe('the report cache is reused until the report changes or the bound passes', () => {
  it('keeps a read at most REPORT_CACHE_SECONDS, then reads again', async () => {
    const slug = freshSlug();
    await reader().read(slug);
    const kept = keys.reportCached(identity('sk_sandbox_read'), slug);
    const ttl = await redis.pttl(kept);
    expect(ttl).toBeGreaterThan((DEFAULT_REPORT_CACHE_SECONDS - 5) * 1000);
    expect(ttl).toBeLessThanOrEqual(DEFAULT_REPORT_CACHE_SECONDS * 1000);

    const other = freshSlug();
    const short = reader('sk_sandbox_write', { cacheSeconds: 1 });
    await short.read(other);
    await short.read(other);
    expect(sandbox.answeredReads().get(other)).toBe(1);
    const shortKey = keys.reportCached(identity('sk_sandbox_write'), other);
    await waitFor(
      'the kept read to expire',
      async () => ((await redis.exists(shortKey)) ? undefined : true),
      5_000,
    );
    await short.read(other);
    expect(sandbox.answeredReads().get(other)).toBe(2);
  });

  it('0 keeps nothing', async () => {
    const slug = freshSlug();
    await reader('sk_sandbox_read', { cacheSeconds: 0 }).read(slug);
    await reader('sk_sandbox_read', { cacheSeconds: 0 }).read(slug);
    expect(sandbox.answeredReads().get(slug)).toBe(2);
  });

  it('a score change or an unpublication makes the next read go to the service (what an event-driven update reads)', async () => {
    const slug = freshSlug();
    const before = sandbox.getReport(slug)!.score.overall;
    await reader().read(slug);
    sandbox.updateReport(slug, { score: { overall: before + 3.5 } });
    // What the report-event handler does for score.changed before it fans the change out.
    await markSlugChanged(redis, keys, slug);
    const after = await reader().read(slug);
    expect(after.kind === 'report' && after.report.score.overall).toBe(before + 3.5);
    await reader().read(slug);
    expect(sandbox.answeredReads().get(slug)).toBe(2);

    sandbox.updateReport(slug, { published: false });
    await markSlugChanged(redis, keys, slug);
    expect((await reader().read(slug)).kind).toBe('not_published');
    // A 404 is a read: kept like a 200, until the report is published again.
    expect((await reader().read(slug)).kind).toBe('not_published');
    expect(sandbox.answeredReads().get(slug)).toBe(3);
    sandbox.updateReport(slug, { published: true });
    await markReportPublished(redis, keys, slug);
    expect((await reader().read(slug)).kind).toBe('report');
  });

  it('a waiter whose filler keeps its read and lets go between the waiter’s two looks reads nothing itself', async () => {
    const slug = freshSlug();
    const lockKey = keys.reportCacheFill(identity('sk_sandbox_read'), slug);
    await redis.set(lockKey, 'another worker', 'PX', 4_500);
    const filler = reader();
    let finished = false;
    // The waiter looked for a kept read and found none; before it asks whether the lock is still held, the
    // filler keeps its read and lets go.
    const waiting = new Proxy(redis, {
      get(target, prop) {
        const value: unknown = Reflect.get(target, prop, target);
        if (prop !== 'exists' || typeof value !== 'function') {
          return typeof value === 'function' ? value.bind(target) : value;
        }
        return async (...args: [string]) => {
          if (!finished && args[0] === lockKey) {
            finished = true;
            await filler.read(slug, { fresh: true });
            await target.del(lockKey);
          }
          return target.exists(...args);
        };
      },
    });
    const waiter = new ReportReader(
      waiting,
      keys,
      new ReportClient({ baseUrl: listening.url, apiKey: 'sk_sandbox_read', maxRetries: 0 }),
    );
    const read = await waiter.read(slug);
    expect(read.kind).toBe('report');
    expect(finished).toBe(true);
    expect(sandbox.answeredReads().get(slug)).toBe(1);
  });

  it('a search is kept, and made again once any report is published or one of its hits changed', async () => {
    const hit = sandbox.listReports().find((r) => r.published && /^[A-Za-z ]+$/.test(r.name))!;
    const q = hit.name.split(' ')[0]!;
    const searches = () => sandbox.requestCount({ route: 'GET /v1/search' });
    const first = await reader().search(q, 10);
    expect(first.length).toBeGreaterThan(0);
    await reader().search(q, 10);
    expect(searches()).toBe(1);
    await markSlugChanged(redis, keys, first[0]!.slug);
    await reader().search(q, 10);
    expect(searches()).toBe(2);
    await markReportPublished(redis, keys, 'some-other-report');
    await reader().search(q, 10);
    await reader().search(q, 10);
    expect(searches()).toBe(3);
  });

  it('serves nothing read before `readSince` (a reconcile run re-reads once, its retry reads nothing again)', async () => {
    const slug = freshSlug();
    await reader().read(slug);
    const since = Date.now();
    await reader('sk_sandbox_read', { readSince: since }).read(slug);
    await reader('sk_sandbox_read', { readSince: since }).read(slug);
    expect(sandbox.answeredReads().get(slug)).toBe(2);
  });
});

describe('which batches kept reads serve', () => {
  const job = (mode: string, origin: unknown) =>
    batchJobSchema.parse({ installationId: 'i1', batchId: 'b', mode, recordIds: ['1'], origin });
  const now = Date.UTC(2026, 10, 26, 12);
  const started = now - 60_000;

  it("a sync, a preview and a report change take any; a reconcile only its run's own; a decision none", () => {
    expect(readSinceOf(job('full', { kind: 'sync', runId: 'full-i1-x-abc' }), now)).toBe(0);
    expect(readSinceOf(job('full', { kind: 'preview', runId: 'p1' }), now)).toBe(0);
    expect(readSinceOf(job('reconcile', { kind: 'report-change', runId: 'ev-7' }), now)).toBe(0);
    const reconcile = { kind: 'sync', runId: `reconcile-i-1-${started.toString(36)}-a1b2c3` };
    expect(readSinceOf(job('reconcile', reconcile), now)).toBe(started);
    // Its retry too: what the killed attempt read serves it.
    expect(readSinceOf(job('reconcile', { kind: 'retry', of: reconcile }), now)).toBe(started);
    expect(readSinceOf(job('reconcile', { kind: 'sync', runId: 'reconcile-odd' }), now)).toBe(now);
    expect(readSinceOf(job('full', { kind: 'rematch' }), now)).toBe(now);
  });
});

describe('upgrading from the run caches', () => {
  it("never reads a run's or a slug-update job's cache as main kept them, and a finished run still drops its own", async () => {
    const slug = freshSlug();
    const real = sandbox.getReport(slug)!.score.overall;
    // As main kept them: `run:{<run id>}:report:<slug>` listed in the run's `:cached` set, 24 hours.
    const stale = JSON.stringify({
      kind: 'report',
      report: { ...sandbox.getReport(slug), score: { overall: real + 50, band: 'strong' } },
      seq: Number.MAX_SAFE_INTEGER,
    });
    for (const runId of ['full-i1-abc-123456', 'ev-42']) {
      const entry = `${keys.run(runId)}:report:${slug}`;
      await redis.set(entry, stale, 'EX', 86_400);
      await redis.sadd(keys.runCached(runId), entry);
    }
    const read = await reader().read(slug);
    expect(read.kind === 'report' && read.report.score.overall).toBe(real);
    expect(sandbox.answeredReads().get(slug)).toBe(1);
    await dropRunCaches(redis, keys, 'full-i1-abc-123456');
    expect(await redis.exists(`${keys.run('full-i1-abc-123456')}:report:${slug}`)).toBe(0);
    expect(await redis.exists(keys.runCached('full-i1-abc-123456'))).toBe(0);
  });
});
