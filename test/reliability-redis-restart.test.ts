import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSystem } from '../local/system.js';
import { staleRecords } from './support/end-state.js';
import { wrongRecords } from './support/expectations.js';
import { startTestSystem, stopTestSystem } from './support/local-system.js';
import { measured } from './support/measured.js';
import { OwnRedisServer } from './support/own-redis.js';
import { type DeliveryLog, deliverUntilAcknowledged } from './support/report-webhooks.js';
import { failedJobs, queuesIdle, runOf } from './support/system-state.js';
import { waitFor } from './support/wait.js';
import { buildWorkerCli, sharedSecretsEnv, WorkerProcess, workerEnvFor } from './support/worker-process.js';

/**
 * Redis killed with SIGKILL and restarted (append-only file, fsync on every write) in the middle of a
 * backfill and in the middle of a burst of report webhooks. The connector must reconnect by itself (the
 * in-process workers, a `report-connector worker` process and the HTTP server), resume, and lose nothing it
 * acknowledged; webhooks answered 503 during the outage are retried by the sender and then processed.
 */

const COMPANIES = 1200;
const OUTAGE_MS = 1_500;
const redisServer = new OwnRedisServer();
let system: LocalSystem;
let worker: WorkerProcess | undefined;

/** Polls through the outage: a check that fails because Redis is away just means "not yet". */
function untilTrue<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
  return waitFor(
    what,
    async () => {
      try {
        return await check();
      } catch {
        return undefined;
      }
    },
    timeoutMs,
    100,
  );
}

async function outage(): Promise<number> {
  const started = Date.now();
  await redisServer.kill();
  // The outage itself: Redis stays down this long before it is started again.
  await sleep(OUTAGE_MS);
  await redisServer.start();
  return Date.now() - started;
}

beforeAll(async () => {
  const [bin] = await Promise.all([buildWorkerCli(), redisServer.start()]);
  system = await startTestSystem({
    redisUrl: redisServer.url,
    companies: COMPANIES,
    workers: 1,
    env: sharedSecretsEnv(),
    logLevel: 'silent',
  });
  system.hubspot.injectFaults({ latencyMs: 150 });
  worker = await WorkerProcess.start(bin, workerEnvFor(system));
}, 180_000);

afterAll(async () => {
  await worker?.kill();
  if (!redisServer.running) await redisServer.start();
  await stopTestSystem(system);
  await redisServer.dispose();
});

describe('Redis restarted under load', () => {
  it('in the middle of a backfill and of a webhook burst: reconnects, resumes, loses nothing acknowledged', async () => {
    await untilTrue(
      'the backfill to be under way',
      async () => ((await runOf(system))?.totals.records ?? 0) >= COMPANIES / 6 || undefined,
    );

    // The burst: our own sender (the sandbox's gives up after three retries); the sandbox only changes the
    // reports. Each slug changes once and gets exactly one event: were that event lost, its records would
    // keep the old score.
    system.sandbox.configureWebhook(undefined, undefined);
    const secret = system.ctx.config.reports.webhookSecrets[0]!;
    const url = `${system.appUrl}/webhooks/reports`;
    const slugs = [
      ...new Set(system.seed.flatMap((c) => (c.expected.status === 'matched' ? [c.expected.slug] : []))),
    ].slice(0, 60);
    const events = slugs.map((slug, i) => {
      const [event] = system.sandbox.updateReport(slug, { score: { overall: 400 + i / 1000 } }).events;
      if (!event) throw new Error(`no score.changed for ${slug}`);
      return event;
    });
    const deliveries: Promise<DeliveryLog>[] = [];
    let acknowledged = 0;
    let killedAt: { records: number; acknowledged: number } | null = null;
    let outageDone: Promise<number> = Promise.resolve(0);
    for (const [i, event] of events.entries()) {
      deliveries.push(
        deliverUntilAcknowledged(url, secret, event, { retryEveryMs: 200, timeoutMs: 90_000 }).then((log) => {
          if (log.acknowledgedAt) acknowledged += 1;
          return log;
        }),
      );
      if (i === 20) {
        await untilTrue('20 acknowledged events', async () => acknowledged >= 20 || undefined, 30_000);
        killedAt = { records: (await runOf(system))?.totals.records ?? 0, acknowledged };
        outageDone = outage();
      }
      // A burst spread over about a second and a half, so that part of it falls in the outage.
      await sleep(25);
    }
    const logs = await Promise.all(deliveries);
    const outageMs = await outageDone;
    const restartedAt = Date.now();

    const run = await untilTrue('the backfill to end after the restart', async () => {
      const r = await runOf(system);
      return r && (r.state === 'done' || r.state === 'stopped') ? r : undefined;
    });
    await untilTrue('idle queues', async () => {
      await queuesIdle(system, 5_000);
      return true;
    });
    const statuses = logs.flatMap((l) => l.statuses);
    const refused = logs.filter((l) => l.statuses.some((s) => s === 503 || s === 0));
    measured('redis-restart', {
      killedAt,
      outageMs,
      recoveredAfterMs: Date.now() - restartedAt,
      totals: run.totals,
      events: logs.length,
      eventsRetriedAfter503: refused.length,
      attempts: statuses.length,
      statuses: Object.fromEntries(
        [...new Set(statuses)].map((s) => [s, statuses.filter((x) => x === s).length]),
      ),
    });

    expect(killedAt!.records).toBeLessThan(COMPANIES);
    expect(run.state).toBe('done');
    expect(run.totals.records).toBe(COMPANIES);
    expect(run.totals.failed).toBe(0);
    // Every event was acknowledged in the end, some only after 503s during the outage.
    expect(logs.filter((l) => l.acknowledgedAt === null)).toEqual([]);
    expect(refused.length).toBeGreaterThan(0);
    // Nothing acknowledged was lost: every changed report reached its records, every record is right.
    expect(staleRecords(system)).toEqual([]);
    expect(wrongRecords(system)).toEqual([]);
    expect(await failedJobs(system)).toBe(0);
    // Neither kind of worker gave up on the lost connection, and the server is ready again.
    expect(worker?.running).toBe(true);
    expect(system.workers[0]?.isRunning()).toBe(true);
    expect((await fetch(`${system.appUrl}/readyz`)).status).toBe(200);
  }, 240_000);
});
