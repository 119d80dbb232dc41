import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReportReader } from '../src/pipeline/report-reader.js';
import { closeRedis, createRedis, deleteKeysWithPrefix } from '../src/redis.js';
import { ReportClient } from '../src/reports/client.js';
import { createSandbox, type ListeningSandbox, type ReportSandbox } from '../src/sandbox/index.js';
import { ROUTES } from '../src/sandbox/sandbox-facts.js';
import { Keys } from '../src/storage/keys.js';
import { REDIS_URL } from './support/redis-url.js';
import { waitFor } from './support/wait.js';

/**
 * The report cache's fill lock: one worker reads a slug while the others wait for its answer. A read can last far
 * longer than the lock (a 429 waited out, three times); the filler renews the lock meanwhile, so a waiter
 * never gives up on a live filler and reads the slug a second time.
 */

const prefix = `rc-test-reader-${randomUUID().slice(0, 8)}`;
const redis = createRedis(REDIS_URL, 'worker');
const keys = new Keys(prefix);
let sandbox: ReportSandbox;
let listening: ListeningSandbox;

beforeAll(async () => {
  sandbox = createSandbox();
  listening = await sandbox.listen(0);
});

afterAll(async () => {
  await listening.close();
  await deleteKeysWithPrefix(REDIS_URL, prefix);
  await closeRedis(redis);
});

function client(): ReportClient {
  return new ReportClient({ baseUrl: listening.url, apiKey: 'sk_sandbox_read' });
}

/**
 * A short fill lock, renewed every third of it: 1,500 ms leaves a renewal 1 s of event-loop lag on a loaded
 * machine (150 ms, then 600 ms failed in CI, where a renewal came late and the waiter read the slug too). The
 * answers below still take twice the lock's life.
 */
function reader(): ReportReader {
  return new ReportReader(redis, keys, client(), { fillLockMs: 1_500 });
}

describe('ReportReader fill lock', () => {
  it('a read slower than the lock is still read once: the waiter takes the filler’s answer', async () => {
    const slug = sandbox.listReports().find((r) => r.published)!.slug;
    // Every answer takes twice the lock's life: the filler must renew it to keep the waiter waiting.
    sandbox.setFaults({ delayMs: 3_000 });
    try {
      const filling = reader().read(slug);
      await waitFor('the filler to hold the lock', async () =>
        (await redis.exists(keys.reportCacheFill(client().keyIdentity, slug))) ? true : undefined,
      );
      const waiting = reader().read(slug);
      const [filled, waited] = await Promise.all([filling, waiting]);
      expect(sandbox.answeredReads().get(slug)).toBe(1);
      expect(waited).toEqual(filled);
      expect(await redis.exists(keys.reportCacheFill(client().keyIdentity, slug))).toBe(0);
    } finally {
      sandbox.clearFaults();
    }
  });

  it('a filler that stops renewing (it died) lets the waiter read the slug itself', async () => {
    const slug = sandbox.listReports().filter((r) => r.published)[1]!.slug;
    // A lock left by a killed worker: nobody renews it.
    await redis.set(keys.reportCacheFill(client().keyIdentity, slug), 'dead-worker', 'PX', 150);
    sandbox.resetRequestCounts();
    const read = await reader().read(slug);
    expect(read.kind).toBe('report');
    expect(sandbox.answeredReads().get(slug)).toBe(1);
  });

  it('a filler killed mid-read holds the waiters a few seconds with the default lease, not 15', async () => {
    const slug = sandbox.listReports().filter((r) => r.published)[2]!.slug;
    const doomed = createRedis(REDIS_URL, 'worker');
    sandbox.setFaults({ delayMs: 10_000 });
    let filling: Promise<unknown> = Promise.resolve();
    try {
      filling = new ReportReader(doomed, keys, client()).read(slug).catch(() => undefined);
      await waitFor('the filler to hold the lock', async () =>
        (await redis.exists(keys.reportCacheFill(client().keyIdentity, slug))) ? true : undefined,
      );
    } finally {
      sandbox.clearFaults();
    }
    // Its process is gone: no renewal reaches Redis any more.
    doomed.disconnect();
    const started = Date.now();
    const read = await new ReportReader(redis, keys, client()).read(slug);
    const waitedMs = Date.now() - started;
    expect(read.kind).toBe('report');
    // The lease was 15 s: a worker killed every few seconds held events for hot reports that long.
    expect(waitedMs).toBeLessThan(9_000);
    await filling;
  }, 30_000);

  it('two workers searching one name at once search it once', async () => {
    const name = sandbox.listReports().find((r) => r.published)!.name;
    sandbox.resetRequestCounts();
    // Every answer takes twice the lock's life: the first search is under way when the second asks.
    sandbox.setFaults({ delayMs: 3_000 });
    try {
      const filling = reader().search(name, 5);
      await waitFor('the first search to hold the lock', async () =>
        (await redis.exists(keys.searchCacheFill(client().keyIdentity, name, 5))) ? true : undefined,
      );
      const waiting = reader().search(name, 5);
      const [filled, waited] = await Promise.all([filling, waiting]);
      expect(sandbox.requestCount({ route: ROUTES.search })).toBe(1);
      expect(filled.length).toBeGreaterThan(0);
      expect(waited).toEqual(filled);
      expect(await redis.exists(keys.searchCacheFill(client().keyIdentity, name, 5))).toBe(0);
    } finally {
      sandbox.clearFaults();
    }
  });
});
