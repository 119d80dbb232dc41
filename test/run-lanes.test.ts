import { afterEach, describe, expect, it } from 'vitest';
import { type LocalSystem, workerEnvFor } from '../local/system.js';
import { AdminMassActions } from '../src/admin/mass-actions.js';
import type { CommandIo } from '../src/cli/io.js';
import { main } from '../src/cli/main.js';
import { upgradeLinkIndex } from '../src/migrations/003-link-index-bucketed.js';
import type { BatchJob } from '../src/pipeline/batch-job.js';
import { batch } from '../src/pipeline/handlers/batch.js';
import { list } from '../src/pipeline/handlers/list.js';
import { type ListJob, parseJobData } from '../src/pipeline/jobs.js';
import { jobIdPart } from '../src/pipeline/queues.js';
import { RunLinks } from '../src/storage/run-links.js';
import { adminLogin } from './support/admin-login.js';
import { startTestSystem, stopTestSystem } from './support/local-system.js';
import { runEnded } from './support/system-state.js';
import { waitFor } from './support/wait.js';

/**
 * Issue 30, "one pass at a time per installation": a sync asked for while one is under way joins it, a full
 * one supersedes an incremental run, a run that can no longer end is stopped and never joined, and runs of the
 * code before the lanes are found. Real Redis under the system's own prefix; no worker unless a test starts
 * one, so a run stays under way until the test moves it.
 */

let system: LocalSystem | undefined;

afterEach(async () => {
  await stopTestSystem(system);
  system = undefined;
});

async function quietSystem(companies = 40): Promise<LocalSystem> {
  system = await startTestSystem({ companies, workers: 0, firstSync: false });
  return system;
}

async function counter(s: LocalSystem, name: string, labels: Record<string, string>): Promise<number> {
  const metric = await s.ctx.metrics.registry.getSingleMetric(name)?.get();
  const value = metric?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  return value?.value ?? 0;
}

function listJobId(runId: string): string {
  return `list-${jobIdPart(runId)}`;
}

function cliIo(s: LocalSystem, out: string[], err: string[]): CommandIo {
  return {
    out: (t) => out.push(t),
    err: (t) => err.push(t),
    env: { ...workerEnvFor(s), LOG_LEVEL: 'silent' },
    isTTY: false,
    untilStopped: () => Promise.resolve(),
  };
}

describe('one pass at a time per installation', () => {
  it('a sync asked for during a run joins it, however many ask at once', async () => {
    const s = await quietSystem();
    const { pipeline } = s.ctx;
    const asked = await Promise.all(
      Array.from({ length: 6 }, () => pipeline.requestSync(s.installationId, 'incremental')),
    );
    const ids = new Set(asked.map((a) => a.runId));
    expect(ids.size).toBe(1);
    expect(asked.filter((a) => !a.joined)).toHaveLength(1);
    const [runId] = [...ids] as [string];
    // A reconcile and a start-up upgrade's full sync... the reconcile joins; one list job in all.
    expect(await pipeline.requestSync(s.installationId, 'reconcile')).toEqual({ runId, joined: true });
    expect(await s.ctx.runs.recent(s.installationId, 10)).toHaveLength(1);
    expect(await s.ctx.queues.backfill.getJobCountByTypes('waiting', 'delayed', 'prioritized')).toBe(1);
    expect(await counter(s, 'report_connector_runs_joined_total', { kind: 'incremental' })).toBe(5);
  });

  it('`sync` prints the run it joined, and the admin API answers 202 with `joined: true`', async () => {
    const s = await quietSystem();
    const out: string[] = [];
    const err: string[] = [];
    expect(await main(['sync', '--installation', s.installationId], cliIo(s, out, err))).toBe(0);
    const [first] = await s.ctx.runs.recent(s.installationId, 1);
    expect(err.join('\n')).toContain(`as run ${first!.id}`);
    expect(await main(['sync', '--installation', s.installationId], cliIo(s, out, err))).toBe(0);
    expect(err.at(-1)).toBe(`Sync already under way for ${s.installationId}: joined run ${first!.id}`);

    const res = await fetch(`${s.appUrl}/admin/api/installations/${s.installationId}/sync`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.ctx.config.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({}),
    });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ runId: first!.id, kind: 'incremental', joined: true });

    // "Sync now" on the installation page joins it too, and says so.
    const { cookie, csrf } = await adminLogin(s);
    const page = await fetch(`${s.appUrl}/admin/installations/${s.installationId}/sync`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf }).toString(),
      redirect: 'manual',
    });
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toContain('done=sync-joined');
    expect(await s.ctx.runs.recent(s.installationId, 10)).toHaveLength(1);
  });

  it('a full sync supersedes an incremental run: one pass, which the superseded run points to', async () => {
    const s = await quietSystem();
    const { pipeline, runs } = s.ctx;
    const incremental = await pipeline.requestSync(s.installationId, 'incremental');
    const full = await pipeline.requestSync(s.installationId, 'full');
    expect(full).toMatchObject({ joined: false, supersededRunId: incremental.runId });
    const old = await runs.get(incremental.runId);
    expect(old).toMatchObject({ state: 'stopped', supersededBy: full.runId });
    // The reason the admin's run list shows names the run that took over.
    expect(old?.stoppedReason).toContain(full.runId);
    expect((await runs.get(full.runId))?.supersedes).toEqual([incremental.runId]);
    // Any sync asked for now, full or not, joins the full pass.
    expect(await pipeline.requestSync(s.installationId, 'full')).toEqual({ runId: full.runId, joined: true });
    expect(await pipeline.requestSync(s.installationId, 'incremental')).toEqual({
      runId: full.runId,
      joined: true,
    });
    expect(await counter(s, 'report_connector_runs_superseded_total', { kind: 'full' })).toBe(1);
    expect(await counter(s, 'report_connector_runs_stopped_total', { reason: 'superseded' })).toBe(1);
    // A setting the full run ran under changed (fixture writes allowed): a new full run takes its place.
    const again = await pipeline.requestSync(s.installationId, 'full', { restart: true });
    expect(again).toMatchObject({ joined: false, supersededRunId: full.runId });
  });

  it('the start-up index upgrade joins a full sync under way', async () => {
    const s = await quietSystem();
    const { pipeline, redis, keys } = s.ctx;
    const sync = await pipeline.requestSync(s.installationId, 'full');
    const [legacy] = keys.legacyIndexKeys(s.installationId);
    await redis.hset(legacy!, 'record-1', 'some-slug');
    const [upgraded] = await upgradeLinkIndex(s.ctx);
    expect(upgraded?.runId).toBe(sync.runId);
    expect(await s.ctx.runs.recent(s.installationId, 10)).toHaveLength(1);
  });

  it('a preview runs beside a sync, and two previews join each other', async () => {
    const s = await quietSystem();
    const { pipeline } = s.ctx;
    const sync = await pipeline.requestSync(s.installationId, 'full');
    const preview = await pipeline.requestSync(s.installationId, 'preview');
    expect(preview.joined).toBe(false);
    expect(preview.runId).not.toBe(sync.runId);
    expect(await pipeline.requestSync(s.installationId, 'preview')).toEqual({
      runId: preview.runId,
      joined: true,
    });
    expect(await pipeline.requestSync(s.installationId, 'incremental')).toEqual({
      runId: sync.runId,
      joined: true,
    });
  });

  it('a run whose list job was lost is stopped with its reason, and the next sync starts a run', async () => {
    const s = await quietSystem();
    const { pipeline, runs, queues } = s.ctx;
    pipeline.deps.runBounds = { staleMs: 60_000, noJobGraceMs: 0 };
    const first = await pipeline.requestSync(s.installationId, 'incremental');
    expect((await pipeline.requestSync(s.installationId, 'incremental')).joined).toBe(true);
    await (await queues.backfill.getJob(listJobId(first.runId)))!.remove();
    const next = await pipeline.requestSync(s.installationId, 'incremental');
    expect(next.joined).toBe(false);
    expect(next.runId).not.toBe(first.runId);
    const lost = await runs.get(first.runId);
    expect(lost?.state).toBe('stopped');
    expect(lost?.stoppedReason).toMatch(/^lost: /);
    expect(await counter(s, 'report_connector_runs_stopped_total', { reason: 'no_jobs' })).toBe(1);
  });

  it('a run without progress for the bound is stopped as stale, and the next sync starts a run', async () => {
    const s = await quietSystem();
    const { pipeline, runs, redis, keys } = s.ctx;
    pipeline.deps.runBounds = { staleMs: 60_000, noJobGraceMs: 30_000 };
    const first = await pipeline.requestSync(s.installationId, 'full');
    await redis.hset(keys.run(first.runId), 'progressAt', String(Date.now() - 61_000));
    const next = await pipeline.requestSync(s.installationId, 'incremental');
    expect(next.joined).toBe(false);
    expect((await runs.get(first.runId))?.stoppedReason).toMatch(/^stale: no progress for 6\d s$/);
    expect(await counter(s, 'report_connector_runs_stopped_total', { reason: 'stale' })).toBe(1);
  });

  it('a run started by the code before the lanes is found and joined; a dead one is stopped', async () => {
    const s = await quietSystem();
    const { pipeline, runs, queues } = s.ctx;
    pipeline.deps.runBounds = { staleMs: 60_000, noJobGraceMs: 0 };
    // As the older startSync did: the run and its list job, no lane.
    const listing = (runId: string): ListJob => ({
      installationId: s.installationId,
      runId,
      mode: 'full',
      cursor: null,
      page: 0,
      batches: 0,
    });
    const olderPreview = await runs.start(s.installationId, 'preview');
    await queues.add(
      'backfill',
      'list',
      { ...listing(olderPreview), preview: true },
      {
        jobId: listJobId(olderPreview),
      },
    );
    const older = await runs.start(s.installationId, 'full');
    await queues.add('backfill', 'list', listing(older), { jobId: listJobId(older) });
    expect(await pipeline.requestSync(s.installationId, 'incremental')).toEqual({
      runId: older,
      joined: true,
    });
    expect(await pipeline.requestSync(s.installationId, 'preview')).toEqual({
      runId: olderPreview,
      joined: true,
    });

    // Were the lane never written: an older run whose list job is gone is stopped, not adopted.
    const t = s.ctx;
    await t.redis.del(t.keys.activeRuns(s.installationId));
    await (await queues.backfill.getJob(listJobId(older)))!.remove();
    const started = await pipeline.requestSync(s.installationId, 'incremental');
    expect(started.joined).toBe(false);
    expect((await runs.get(older))?.state).toBe('stopped');
  });

  it('the reconcile skips a run under way and a recent full pass, and reconciles once the period has passed', async () => {
    const s = await quietSystem();
    const { pipeline, runs, queues } = s.ctx;
    const period = 24 * 3_600_000;
    pipeline.deps.reconcilePeriodMs = period;
    const sync = await pipeline.requestSync(s.installationId, 'full');
    const now = Date.now();
    expect(await pipeline.reconcileAll(now)).toEqual([
      { installationId: s.installationId, action: 'skipped', why: 'under_way', recheckInMs: 3_600_000 },
    ]);
    // The sync ends done: a full pass now.
    await runs.listingDone(sync.runId, 0);
    expect((await runs.get(sync.runId))?.state).toBe('done');
    const startedAt = Date.parse((await runs.get(sync.runId))!.startedAt);
    const [skipped] = await pipeline.reconcileAll(now);
    expect(skipped).toMatchObject({ action: 'skipped', why: 'recent_pass' });
    // Looked at again when the period since the pass began ends: its linked slugs are then read again.
    const checks = await queues.schedule.getJobs(['delayed']);
    const dueAt = checks
      .filter((j) => j.name === 'reconcile' && j.data.installationId === s.installationId)
      .map((j) => j.timestamp + j.delay);
    expect(Math.max(...dueAt)).toBeGreaterThanOrEqual(startedAt + period);
    expect(Math.max(...dueAt)).toBeLessThan(startedAt + period + 60_000);
    // The check is a `reconcile` job of one installation; the scheduler's own payload stays `{}`.
    const check = checks.find((j) => j.name === 'reconcile')!;
    expect(parseJobData('reconcile', check.data)).toEqual({ installationId: s.installationId });
    expect(parseJobData('reconcile', {})).toEqual({});
    // A preview is no pass.
    await pipeline.requestSync(s.installationId, 'preview');
    const [due] = await pipeline.reconcileAll(startedAt + period + 1);
    expect(due).toMatchObject({ action: 'started' });
    expect((await runs.get((due as { runId: string }).runId))?.kind).toBe('reconcile');
  });
});

describe('following a superseded run', () => {
  it('`--wait` on it follows the full sync, whose undo takes back the superseded run’s links too', async () => {
    const s = await quietSystem(250);
    const { pipeline, runs, queues, redis, keys } = s.ctx;
    await (await s.ctx.runtime.open(s.installationId)).connector.ensureFields();
    const incremental = await pipeline.requestSync(s.installationId, 'incremental');
    // The incremental run lists everything and does its first batch, by hand, before the full sync is asked.
    const listJob = (await queues.backfill.getJob(listJobId(incremental.runId)))!;
    let data = listJob.data as ListJob;
    await list(pipeline, data, {
      id: listJob.id!,
      attemptsStarted: 1,
      updateData: async (next) => {
        data = next;
      },
    });
    await listJob.remove();
    const batches = (await queues.backfill.getJobs(['waiting', 'prioritized'])).filter(
      (j) => j.name === 'batch',
    );
    expect(batches.length).toBeGreaterThan(1);
    await batch(pipeline, batches[0]!.data as BatchJob);
    const linkedFirst = await new RunLinks(redis, keys).linksOf(s.installationId, incremental.runId);
    expect(linkedFirst.size).toBeGreaterThan(0);

    const full = await pipeline.requestSync(s.installationId, 'full');
    expect(full).toMatchObject({ supersededRunId: incremental.runId });
    s.workers.push(await s.ctx.startWorkers());
    const out: string[] = [];
    const err: string[] = [];
    const { followRuns } = await import('../src/cli/commands/sync.js');
    const [followed] = await followRuns(s.ctx, [incremental.runId], cliIo(s, out, err), 50);
    expect(followed).toMatchObject({ id: full.runId, state: 'done' });
    expect(err.join('\n')).toContain(`superseded by the full sync ${full.runId}`);
    // The superseded run's queued batches were left to the full run: it did only the one done by hand.
    expect((await runs.get(incremental.runId))?.batchesDone).toBe(1);
    await runEnded(s, full.runId);

    // The full run found those records linked already; undoing it takes their links back all the same.
    const ownLinks = await new RunLinks(redis, keys).linksOf(s.installationId, full.runId);
    for (const id of linkedFirst.keys()) expect(ownLinks.has(id)).toBe(false);
    const mass = new AdminMassActions(s.ctx, async (id) => (await s.ctx.installations.get(id))!);
    const shown = await mass.preview(s.installationId, { kind: 'undo-run', runId: full.runId });
    const undone = await mass.apply(
      s.installationId,
      { kind: 'undo-run', runId: full.runId },
      { kind: 'admin-token', id: null },
      shown.confirm,
    );
    expect(undone.done).toBe(shown.count);
    const taken = new Set((await mass.log.get(s.installationId, undone.massId!))!.records.map((r) => r.id));
    for (const id of linkedFirst.keys()) expect(taken.has(id), id).toBe(true);
    for (const id of linkedFirst.keys()) expect(s.crm.record(id)?.slug ?? null).toBeNull();
  }, 120_000);

  it('`sync --wait` that joined a run follows it and exits 0 when it ends done', async () => {
    const s = await quietSystem();
    await (await s.ctx.runtime.open(s.installationId)).connector.ensureFields();
    s.workers.push(await s.ctx.startWorkers());
    // Held until the CLI has joined: the run cannot end before.
    await s.ctx.queues.backfill.pause();
    const running = await s.ctx.pipeline.requestSync(s.installationId, 'full');
    const out: string[] = [];
    const err: string[] = [];
    const cli = main(['sync', '--installation', s.installationId, '--wait'], cliIo(s, out, err));
    await waitFor(
      'the CLI to join',
      () => err.some((l) => l.includes(`joined run ${running.runId}`)) || undefined,
    );
    await s.ctx.queues.backfill.resume();
    expect(await cli, err.join('\n')).toBe(0);
    expect((await s.ctx.runs.get(running.runId))?.state).toBe('done');
    expect(err.join('\n')).toContain('Sync finished');
  }, 120_000);

  it('`sync --full --preview` is accepted and previews', async () => {
    system = await startTestSystem({ companies: 20 });
    const s = system;
    await runEnded(s);
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(
      ['sync', '--installation', s.installationId, '--full', '--preview'],
      cliIo(s, out, err),
    );
    expect(code, err.join('\n')).toBe(0);
    expect(out.join('\n')).toContain(`Preview of ${s.installationId} (nothing was written)`);
  }, 120_000);
});
