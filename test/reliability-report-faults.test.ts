import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSystem } from '../local/system.js';
import { InstallationService } from '../src/app/installation-service.js';
import { identityOf } from '../src/ratelimit/redis-gate.js';
import { ROUTES } from '../src/sandbox/index.js';
import { gateKeys } from '../src/storage/keys.js';
import { staleRecords } from './support/end-state.js';
import { wrongRecords } from './support/expectations.js';
import { startTestSystem, stopTestSystem } from './support/local-system.js';
import { measured } from './support/measured.js';
import { type ProxyRule, ReportProxy } from './support/report-proxy.js';
import { failedJobs, runEnded, runOf } from './support/system-state.js';
import { waitFor } from './support/wait.js';

/**
 * The report service failing while a full sync runs: a share of 5xx, an outage of 5xx, timeouts, 429 bursts
 * with a short, no, or a long `Retry-After`, and the API key revoked in the middle (401). Before every sync
 * every published report gets a new score (without events), so a sync that skipped records under the fault
 * leaves them stale. A proxy in front of the sandbox gives the answers the sandbox does not.
 */

const COMPANIES = 600;
const CLIENT_TIMEOUT_MS = 500;
const proxy = new ReportProxy();
let system: LocalSystem;
let version = 0;

beforeAll(async () => {
  const proxyUrl = await proxy.listen();
  system = await startTestSystem({
    companies: COMPANIES,
    workers: 0,
    logLevel: 'silent',
    // Each sync must read every report through the faults: nothing is kept between syncs (REPORT_CACHE_SECONDS).
    env: {
      REPORTS_API_URL: proxyUrl,
      REPORTS_TIMEOUT_MS: String(CLIENT_TIMEOUT_MS),
      REPORT_CACHE_SECONDS: '0',
    },
  });
  proxy.target = new URL(system.sandboxUrl).origin;
  // Syncs do the work here, not score.changed events: the sandbox keeps its changes to itself.
  system.sandbox.configureWebhook(undefined, undefined);
  await system.ctx.startWorkers();
  const first = await runEnded(system);
  expect(first.state).toBe('done');
  expect(wrongRecords(system)).toEqual([]);
}, 120_000);

afterAll(async () => {
  await stopTestSystem(system);
  await proxy.close();
});

/** A new score for every published report, so the next sync has every linked record to rewrite. */
function newScoresEverywhere(): void {
  version += 1;
  system.sandbox.listReports().forEach((report, i) => {
    if (report.published)
      system.sandbox.updateReport(report.slug, { score: { overall: 100 * version + i / 1000 } });
  });
}

async function fullSync(): Promise<string> {
  newScoresEverywhere();
  return system.ctx.pipeline.startSync(system.installationId, 'full');
}

async function networkFailures(): Promise<number> {
  const metric = await system.ctx.metrics.upstreamCalls.get();
  return metric.values
    .filter((v) => v.labels.service === 'reports' && v.labels.outcome === 'network')
    .reduce((n, v) => n + v.value, 0);
}

async function expectRightAfter(runId: string): Promise<void> {
  const run = await runEnded(system, runId);
  expect(run.state).toBe('done');
  expect(run.totals.failed).toBe(0);
  expect(wrongRecords(system)).toEqual([]);
  expect(staleRecords(system)).toEqual([]);
  expect(await failedJobs(system)).toBe(0);
}

/** The most requests the proxy saw in any `windowMs` between `from` and `to`. */
function busiestWindow(from: number, to: number, windowMs: number): number {
  const times = proxy.requests.filter((r) => r.at >= from && r.at <= to).map((r) => r.at);
  let most = 0;
  for (const [i, t] of times.entries())
    most = Math.max(most, times.slice(i).filter((u) => u < t + windowMs).length);
  return most;
}

describe('the report service failing during a full sync', () => {
  it('a third of the calls answer 503: retried, every record ends with the new score', async () => {
    const since = Date.now();
    system.sandbox.setFaults({ failShare: 0.34 });
    const runId = await fullSync();
    await runEnded(system, runId);
    system.sandbox.clearFaults();
    measured('reports-5xx-share', {
      answered503: proxy.count(503, since),
      requests: proxy.count(undefined, since),
    });
    expect(proxy.count(503, since)).toBeGreaterThan(10);
    await expectRightAfter(runId);
  });

  it('every call answers 503 for a while: jobs retry with backoff, then finish', async () => {
    const since = Date.now();
    system.sandbox.setFaults({ failShare: 1 });
    const runId = await fullSync();
    // Longer than the client's own retries: a job gives up an attempt and BullMQ retries it later.
    const retried = await waitFor(
      'a job to be retried after failing an attempt',
      async () => {
        const jobs = await system.ctx.queues.backfill.getJobs(['delayed', 'wait', 'active']);
        return jobs.find((j) => j.attemptsMade > 0);
      },
      30_000,
    );
    const outageMs = Date.now() - since;
    system.sandbox.clearFaults();
    measured('reports-5xx-outage', {
      outageMs,
      retriedJob: retried.name,
      failedReason: retried.failedReason,
      answered503: proxy.count(503, since),
      perSecond: proxy.count(503, since) / (outageMs / 1000),
    });
    await expectRightAfter(runId);
  });

  it(`answers slower than the client's ${CLIENT_TIMEOUT_MS} ms timeout: timed out, retried, finished`, async () => {
    const before = await networkFailures();
    system.sandbox.setFaults({ delayMs: CLIENT_TIMEOUT_MS + 300 });
    const runId = await fullSync();
    await waitFor(
      'three timed-out calls',
      async () => ((await networkFailures()) - before >= 3 ? true : undefined),
      30_000,
    );
    system.sandbox.clearFaults();
    measured('reports-timeouts', { timedOut: (await networkFailures()) - before });
    await expectRightAfter(runId);
  });

  for (const retryAfter of ['1', null] as const) {
    it(`a two-second burst of 429 ${retryAfter ? `with Retry-After: ${retryAfter}` : 'without Retry-After'}: paced, not hammered`, async () => {
      const from = Date.now();
      const until = from + 2_000;
      const headers: Record<string, string> = retryAfter ? { 'retry-after': retryAfter } : {};
      const rule: ProxyRule = {
        matches: () => Date.now() < until,
        answer: () => ({
          status: 429,
          headers,
          body: { error: { code: 'rate_limited', message: 'slow down' } },
        }),
      };
      proxy.rules.push(rule);
      try {
        const runId = await fullSync();
        await runEnded(system, runId);
        const refused = proxy.count(429, from);
        const busiest = busiestWindow(from, until, 500);
        measured('reports-429-burst', { retryAfter, refused, busiest500ms: busiest });
        // Without pacing, 4 backfill slots would send a request every few ms; paced, a handful per window.
        expect(refused).toBeGreaterThan(0);
        expect(refused).toBeLessThan(60);
        expect(busiest).toBeLessThanOrEqual(12);
        await expectRightAfter(runId);
      } finally {
        proxy.rules.splice(proxy.rules.indexOf(rule), 1);
      }
    });
  }

  it('a 429 whose Retry-After is longer than a worker may wait: the job is delayed by it, not failed', async () => {
    let refused = false;
    const rule = {
      matches: (r: { path: string }) => !refused && r.path.includes('/v1/reports/'),
      answer: () => {
        refused = true;
        return { status: 429, headers: { 'retry-after': '40' }, body: { error: 'rate limited' } };
      },
    };
    proxy.rules.push(rule);
    try {
      const runId = await fullSync();
      const { queues, redis, keys } = system.ctx;
      const delayed = await waitFor(
        'a job delayed by the Retry-After',
        async () => {
          const jobs = await queues.backfill.getDelayed();
          return jobs.length > 0 ? jobs : undefined;
        },
        30_000,
      );
      const [job] = delayed;
      const score = Number(await redis.zscore(queues.backfill.keys.delayed!, job!.id!));
      // BullMQ keeps the due time in the score's high bits (times 4096).
      const dueInMs = Math.floor(score / 4096) - Date.now();
      measured('reports-429-long-retry-after', { dueInMs });
      expect(dueInMs).toBeGreaterThan(30_000);
      expect(dueInMs).toBeLessThanOrEqual(40_500);
      expect((await runOf(system, runId))?.state).not.toBe('done');
      // The key's gate holds every caller off for the same 40 s (the service refuses the key meanwhile).
      const pause = gateKeys(keys.reportsGate(identityOf(system.ctx.config.reports.apiKey!))).pause;
      expect(await redis.pttl(pause)).toBeGreaterThan(30_000);
      // Forty seconds pass: the pause ends, and the jobs it delayed (the one refused and any that met the
      // pause) are promoted instead of waited for.
      await redis.del(pause);
      await waitFor(
        'the run to end',
        async () => {
          for (const j of await queues.backfill.getDelayed()) await j.promote();
          return (await runOf(system, runId))?.state === 'done' ? true : undefined;
        },
        30_000,
      );
      await expectRightAfter(runId);
    } finally {
      proxy.rules.splice(proxy.rules.indexOf(rule), 1);
    }
  });

  it('the key is revoked in the middle (401): the installation stops as key_invalid, resumes with a new key', async () => {
    const revoked = system.ctx.config.reports.apiKey!;
    let runId = await fullSync();
    await waitFor(
      'the sync to be under way',
      async () => (((await runOf(system, runId))?.totals.records ?? 0) >= 100 ? true : undefined),
      30_000,
    );
    system.sandbox.setFaults({ revokedKeys: [revoked] });
    // On a fast machine the sync can end before the revocation lands (its last batches may use reads it
    // already cached); then the next sync, which reads afresh, meets it.
    const first = await waitFor(
      'the revocation to be met or the sync to end',
      async () => {
        const installation = await system.ctx.installations.get(system.installationId);
        if (installation?.status === 'key_invalid') return 'met';
        return (await runOf(system, runId))?.state === 'done' ? 'done' : undefined;
      },
      30_000,
    );
    if (first === 'done') runId = await fullSync();
    const stopped = await waitFor(
      'the installation to stop as key_invalid',
      async () => {
        const installation = await system.ctx.installations.get(system.installationId);
        return installation?.status === 'key_invalid' ? installation : undefined;
      },
      30_000,
    );
    expect(stopped.statusReason).toMatch(/401/);
    const run = await runEnded(system, runId, 30_000);
    expect(run.state).toBe('stopped');
    expect(run.stoppedReason).toMatch(/401/);

    // No retry storm: once stopped, the revoked key is hardly used again.
    const usedAtStop = system.sandbox.requestCount({ key: revoked });
    const afterStop = Date.now();
    await waitFor('two quiet seconds', () => (Date.now() - afterStop >= 2_000 ? true : undefined), 5_000);
    const usedAfterStop = system.sandbox.requestCount({ key: revoked }) - usedAtStop;
    measured('reports-key-revoked', { usedAfterStop, reason: stopped.statusReason });
    expect(usedAfterStop).toBeLessThanOrEqual(4);

    const replacement = `sk_test_${randomUUID().replace(/-/g, '')}`;
    system.sandbox.registerKey({ key: replacement, scopes: ['read'], sandbox: true });
    const { resumedRunId } = await new InstallationService(system.ctx).setReportKey(
      system.installationId,
      replacement,
    );
    expect(resumedRunId).not.toBeNull();
    const resumed = await runEnded(system, resumedRunId!);
    expect(resumed.state).toBe('done');
    expect(resumed.totals.failed).toBe(0);
    expect((await system.ctx.installations.get(system.installationId))?.status).toBe('connected');
    expect(system.sandbox.requestCount({ key: replacement, route: ROUTES.report })).toBeGreaterThan(0);
    expect(wrongRecords(system)).toEqual([]);
    expect(staleRecords(system)).toEqual([]);
  });
});
