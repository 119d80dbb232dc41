import { describe, expect, it } from 'vitest';
import { lockRecords } from '../src/storage/record-locks.js';
import { staleRecords } from './support/end-state.js';
import { wrongRecords } from './support/expectations.js';
import { installThroughOAuth } from './support/hubspot-install.js';
import { suiteSystem } from './support/local-system.js';
import { measured } from './support/measured.js';
import { failedJobs, queuesIdle, runEnded, runOf } from './support/system-state.js';
import { waitFor } from './support/wait.js';

/**
 * The CRM (the local HubSpot) failing while a full sync runs: 429s of both policies, 5xx, an expired access
 * token (refreshed once), a revoked refresh token (disconnected, no retry storm), a record deleted in the
 * middle of a batch and a property deleted by an admin. Before each sync every published report gets a new
 * score (without events), so every linked record has to be written again under the fault.
 */

const COMPANIES = 600;
// Each sync rewrites scores changed without an event: nothing is kept between syncs (REPORT_CACHE_SECONDS).
const system = suiteSystem(
  {
    companies: COMPANIES,
    logLevel: 'silent',
    env: { REPORT_CACHE_SECONDS: '0' },
  },
  {
    prepare: async () => {
      system.sandbox.configureWebhook(undefined, undefined);
      const first = await runEnded(system);
      expect(first.state).toBe('done');
    },
  },
);
let version = 0;
/** Records a test deleted from the CRM: every later check leaves them out. */
const gone = new Set<string>();

async function fullSync(): Promise<string> {
  version += 1;
  system.sandbox.listReports().forEach((report, i) => {
    if (report.published)
      system.sandbox.updateReport(report.slug, { score: { overall: 100 * version + i / 1000 } });
  });
  return system.ctx.pipeline.startSync(system.installationId, 'full');
}

function calls(route?: string): number {
  const all = system.hubspot.stats().calls;
  return route ? (all[route] ?? 0) : Object.values(all).reduce((n, c) => n + c, 0);
}

function answered(status: number): number {
  return system.hubspot.stats().statuses[String(status)] ?? 0;
}

async function expectRightAfter(runId: string, ignoring: ReadonlySet<string> = gone): Promise<void> {
  const run = await runEnded(system, runId);
  expect(run.state).toBe('done');
  expect(run.totals.failed).toBe(0);
  const names = new Set(
    system.recordIds.flatMap((id, i) => (ignoring.has(id) ? [system.seed[i]!.name] : [])),
  );
  expect(wrongRecords(system).filter((w) => ![...names].some((n) => w.startsWith(`${n}:`)))).toEqual([]);
  expect(staleRecords(system).filter((s) => !ignoring.has(s.split(' ')[0]!.replace(':', '')))).toEqual([]);
}

describe('the CRM failing during a full sync', () => {
  it('429 TEN_SECONDLY_ROLLING: a budget of 4 calls a second and 5 forced 429s, paced through', async () => {
    system.hubspot.resetStats();
    system.hubspot.setRateLimit(4, 1_000);
    system.hubspot.injectFaults({ rateLimitNext: 5 });
    try {
      const runId = await fullSync();
      await runEnded(system, runId);
      const stats = { calls: calls(), answered429: answered(429) };
      measured('crm-429-ten-secondly', stats);
      expect(stats.answered429).toBeGreaterThanOrEqual(5);
      // Paced, not a storm: most calls get through.
      expect(stats.answered429).toBeLessThan(stats.calls / 2);
      await expectRightAfter(runId);
    } finally {
      system.hubspot.clearFaults();
      system.hubspot.setRateLimit(110, 10_000);
    }
  });

  it('429 DAILY: the work waits for the next day instead of retrying, then finishes', async () => {
    system.hubspot.resetStats();
    system.hubspot.injectFaults({ dailyLimitExceeded: true });
    const nextMidnight = (t: Date) => Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), t.getUTCDate() + 1);
    const midnightBefore = nextMidnight(new Date());
    const runId = await fullSync();
    const { queues, redis } = system.ctx;
    const delayed = await waitFor(
      'the listing to be put off',
      async () => {
        const jobs = await queues.backfill.getDelayed();
        return jobs.length > 0 ? jobs : undefined;
      },
      20_000,
    );
    const callsAtDelay = calls();
    const dueAt = Math.floor(
      Number(await redis.zscore(queues.backfill.keys.delayed!, delayed[0]!.id!)) / 4096,
    );
    // The next UTC midnight, as seen before the sync or now (the test may straddle one).
    const midnights = [midnightBefore, nextMidnight(new Date())];
    // A quiet wait: nothing more reaches HubSpot while the daily limit is spent.
    const quietFrom = Date.now();
    await waitFor('two quiet seconds', () => (Date.now() - quietFrom >= 2_000 ? true : undefined), 5_000);
    measured('crm-429-daily', {
      callsAtDelay,
      callsTwoSecondsLater: calls(),
      dueAt: new Date(dueAt).toISOString(),
    });
    expect(calls()).toBe(callsAtDelay);
    expect(callsAtDelay).toBeLessThanOrEqual(2);
    expect(midnights.some((m) => Math.abs(dueAt - m) < 5_000)).toBe(true);
    expect((await system.ctx.installations.get(system.installationId))?.status).toBe('connected');
    // The next day: the limit is reset and the job's time has come (promoted instead of waited for).
    system.hubspot.clearFaults();
    for (const job of delayed) await job.promote();
    await expectRightAfter(runId);
  });

  it('5xx on a third of the calls and the next 6 calls: retried, every record right', async () => {
    system.hubspot.resetStats();
    system.hubspot.injectFaults({ failShare: 0.3, failNext: 6, failStatus: 503 });
    try {
      const runId = await fullSync();
      await runEnded(system, runId);
      measured('crm-5xx', { calls: calls(), answered503: answered(503) });
      expect(answered(503)).toBeGreaterThanOrEqual(6);
      await expectRightAfter(runId);
    } finally {
      system.hubspot.clearFaults();
    }
  });

  it('a record deleted in the middle of its batch: skipped and forgotten, the rest of the batch written', async () => {
    // The first batch is the first page: hold its records' locks so it waits, listed but not yet written.
    const firstPage = system.recordIds.slice(0, 100);
    const { ctx, installationId } = system;
    const locks = await lockRecords(
      ctx.redis,
      firstPage.map((id) => ctx.keys.recordLock(installationId, id)),
      { ttlMs: 20_000 },
    );
    const deleted = system.recordIds
      .filter((_id, i) => i < 100 && system.seed[i]!.expected.status === 'matched')
      .slice(0, 3);
    let runId: string;
    try {
      runId = await fullSync();
      await waitFor(
        'the listing to finish',
        async () => ((await runOf(system, runId))?.batchesTotal != null ? true : undefined),
        20_000,
      );
      for (const id of deleted) {
        await system.hubspot.deleteCompany(id);
        gone.add(id);
      }
    } finally {
      await locks.release();
    }
    const run = await runEnded(system, runId);
    const historyAfter = deleted.map((id) =>
      system.hubspot.getCompany(id)!.history.filter((h) => h.at > run.startedAt && h.source === 'api'),
    );
    measured('crm-record-deleted', { deleted, totals: run.totals });
    expect(run.totals.skipped).toBeGreaterThanOrEqual(deleted.length);
    expect(historyAfter.flat()).toEqual([]);
    expect(await ctx.index.slugsOf(installationId, deleted)).toEqual(deleted.map(() => null));
    await expectRightAfter(runId);
  });

  it('a property deleted by an admin: the sync stops and says which; the field setup recreates it', async () => {
    system.hubspot.store.properties.delete('report_score');
    const runId = await fullSync();
    const run = await runEnded(system, runId);
    measured('crm-field-removed', { state: run.state, stoppedReason: run.stoppedReason });
    expect(run.state).toBe('stopped');
    expect(run.stoppedReason).toMatch(/report_score/);
    await queuesIdle(system);

    const installation = (await system.ctx.installations.get(system.installationId))!;
    const fields = await system.ctx.runtime.connectorFor(installation).ensureFields();
    expect(fields.created).toEqual(['report_score']);
    const again = await system.ctx.pipeline.startSync(system.installationId, 'full');
    await expectRightAfter(again);
  });

  it('an expired access token (OAuth install): refreshed once, the sync carries on', async () => {
    const installed = await installThroughOAuth(system);
    expect(installed).toBe(system.installationId);
    expect((await system.ctx.installations.get(installed))?.mode).toBe('oauth');
    await runEnded(system);
    await queuesIdle(system);

    system.hubspot.resetStats();
    const runId = await fullSync();
    await waitFor(
      'the sync to be under way',
      async () => (((await runOf(system, runId))?.recordsListed ?? 0) > 0 ? true : undefined),
      20_000,
    );
    system.hubspot.expireAccessTokens();
    await expectRightAfter(runId);
    measured('crm-token-expired', { tokenCalls: calls('oauth.token'), answered401: answered(401) });
    expect(answered(401)).toBeGreaterThanOrEqual(1);
    expect(calls('oauth.token')).toBe(1);
  });

  it('a revoked refresh token: disconnected at the first refusal, no retry storm', async () => {
    system.hubspot.resetStats();
    system.hubspot.revokeRefreshTokens();
    system.hubspot.expireAccessTokens();
    const runId = await fullSync();
    const disconnected = await waitFor(
      'the installation to be disconnected',
      async () => {
        const installation = await system.ctx.installations.get(system.installationId);
        return installation?.status === 'disconnected' ? installation : undefined;
      },
      20_000,
    );
    const run = await runEnded(system, runId, 20_000);
    await queuesIdle(system);
    const atStop = { token: calls('oauth.token'), all: calls() };
    const quietFrom = Date.now();
    await waitFor('three quiet seconds', () => (Date.now() - quietFrom >= 3_000 ? true : undefined), 5_000);
    measured('crm-refresh-revoked', {
      ...atStop,
      later: calls(),
      reason: disconnected.statusReason,
      failedJobs: await failedJobs(system),
    });
    expect(disconnected.statusReason).toMatch(/refresh token was refused/);
    expect(run.state).toBe('stopped');
    expect(atStop.token).toBe(1);
    expect(calls()).toBe(atStop.all);

    // A new consent connects it again, and the next sync brings every record up to date.
    await installThroughOAuth(system);
    const resumed = await runEnded(system);
    expect(resumed.id).not.toBe(runId);
    await expectRightAfter(resumed.id);
    expect((await system.ctx.installations.get(system.installationId))?.status).toBe('connected');
  });
});
