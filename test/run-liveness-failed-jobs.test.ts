import type { Job } from 'bullmq';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSystem } from '../local/system.js';
import { list } from '../src/pipeline/handlers/list.js';
import { type ListJob, parseJobData } from '../src/pipeline/jobs.js';
import { LivenessWatch, setOldestQueuedMetric } from '../src/pipeline/liveness-watch.js';
import { type DeadRun, deadRunReason } from '../src/pipeline/run-liveness.js';
import { enqueueSlugUpdate } from '../src/pipeline/score-changes/updates.js';
import { PipelineWorkers } from '../src/pipeline/workers.js';
import { createRedis, type RedisClient } from '../src/redis.js';
import { startTestSystem, stopTestSystem } from './support/local-system.js';
import { runEnded } from './support/system-state.js';
import { waitFor } from './support/wait.js';

/**
 * A run waits for every batch it queued. Workers killed under a batch make BullMQ count it stalled each time;
 * once its stalled count runs out, BullMQ fails it for good ("job stalled more than allowable limit") and
 * nothing ran it again, so its run never ended (the outside fault run: a backfill stopped for good on a cluster
 * whose workers were SIGKILLed every 5-10 s). Here a batch is failed exactly as BullMQ fails it then: its
 * stalled check sets the stall count past the limit and a deferred failure on the job, and the next worker to
 * take it fails it without running it.
 */

const COMPANIES = 120;
const STALLED_FOR_GOOD = 'job stalled more than allowable limit';

let system: LocalSystem;
let firstWorkers: PipelineWorkers | undefined;
const logged: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  const logger = pino(
    { level: 'warn' },
    {
      write(line: string) {
        logged.push(JSON.parse(line) as Record<string, unknown>);
      },
    },
  );
  system = await startTestSystem({ companies: COMPANIES, workers: 0, firstSync: false, logger });
  await (await system.ctx.runtime.open(system.installationId)).connector.ensureFields();
});

afterAll(async () => {
  await stopTestSystem(system);
});

/** Queues a run's batches by running its lister here (paused queue), as a worker would. */
async function listRun(kind: 'initial' | 'full'): Promise<{ runId: string; batches: Job[] }> {
  const { ctx, installationId } = system;
  await ctx.queues.backfill.pause();
  const runId = await ctx.pipeline.startSync(installationId, kind);
  const listJob = (await ctx.queues.backfill.getWaiting()).find((j) => j.name === 'list');
  if (!listJob) throw new Error('no list job queued');
  let saved: ListJob = parseJobData('list', listJob.data);
  const job = {
    id: listJob.id ?? 'list',
    attemptsStarted: 1,
    updateData: async (next: ListJob) => {
      saved = next;
    },
  };
  await list(ctx.pipeline, saved, job);
  await listJob.remove();
  const batches = (await ctx.queues.backfill.getWaiting()).filter((j) => j.name === 'batch');
  expect(batches.length).toBe(saved.batches);
  expect(batches.length).toBeGreaterThan(2);
  return { runId, batches };
}

/** What BullMQ's stalled check writes on a job whose stalled count ran out (moveStalledJobsToWait). */
async function exhaustStalledCount(job: Job): Promise<void> {
  const key = system.ctx.queues.backfill.toKey(job.id ?? '');
  await system.ctx.redis.hset(key, 'stc', '11', 'defa', STALLED_FOR_GOOD);
}

async function failedForGood(id: string): Promise<Job> {
  return waitFor(
    `job ${id} to fail`,
    async () => {
      const job = await system.ctx.queues.backfill.getJob(id);
      return job && (await job.isFailed()) ? job : undefined;
    },
    30_000,
    100,
  );
}

describe('a run’s batch that exhausted its stalled count', () => {
  it('is queued again and the run ends with every record', { timeout: 120_000 }, async () => {
    const { ctx } = system;
    const { runId, batches } = await listRun('initial');
    const victim = batches[1]!;
    await exhaustStalledCount(victim);
    firstWorkers = await ctx.startWorkers();
    await ctx.queues.backfill.resume();

    const failed = await failedForGood(victim.id ?? '');
    expect(failed.failedReason).toBe(STALLED_FOR_GOOD);
    // Without the watch the run stays `processing` one batch short, for good (until found stale, 15 min).
    const run = await runEnded(system, runId, 45_000);
    expect(run.state).toBe('done');
    expect(run.batchesDone).toBe(batches.length);
    expect(run.recordsListed).toBe(COMPANIES);
    expect(run.totals.records).toBe(COMPANIES);
    expect(run.totals.failed).toBe(0);
    const revived = await ctx.queues.backfill.getJob(`${victim.id}-revived1`);
    expect(revived && (await revived.isCompleted())).toBe(true);
    expect(logged.some((l) => l.msg === 'a run’s job failed for good: queued again under a new id')).toBe(
      true,
    );
  });
});

describe('the liveness watch', () => {
  let connection: RedisClient;
  let workers: PipelineWorkers;

  beforeAll(async () => {
    await firstWorkers?.close();
    connection = createRedis(system.ctx.config, 'worker', 'liveness-test-workers');
    workers = new PipelineWorkers(system.ctx.pipeline, {
      connection,
      prefix: system.ctx.config.redisPrefix,
      liveness: 'off',
    });
    await workers.waitUntilReady();
  });

  afterAll(async () => {
    await workers?.close();
    await connection?.quit();
  });

  it('names a stalled run, its lane and oldest job, and shows the lane’s oldest queued age', async () => {
    const { ctx } = system;
    const { runId, batches } = await listRun('full');
    const watch = new LivenessWatch(ctx.pipeline, { maxRevivals: 0 });
    logged.length = 0;
    const later = Date.now() + 20_000;
    await watch.tick(later);

    const runWarning = logged.find((l) => l.runId === runId);
    expect(runWarning?.level).toBe(40);
    expect(runWarning?.lane).toBe('sync');
    expect(runWarning?.queue).toBe('backfill');
    const oldest = runWarning?.waitingFor as { id: string; name: string } | undefined;
    expect(oldest?.name).toBe('batch');
    expect(batches.map((b) => b.id)).toContain(oldest?.id);
    expect(String(runWarning?.msg)).toContain(oldest?.id);
    const laneWarning = logged.find((l) => l.lane === 'backfill' && l.oldestJob !== undefined);
    expect((laneWarning?.oldestJob as { id: string } | undefined)?.id).toBe(oldest?.id);

    // The gauge the scrape shows: the oldest waiting batch's age, from the watch's record of it.
    await setOldestQueuedMetric(ctx.pipeline, later);
    const gauge = await ctx.metrics.oldestQueuedSeconds.get();
    const backfill = gauge.values.find((v) => v.labels.queue === 'backfill')?.value ?? 0;
    expect(backfill).toBeGreaterThanOrEqual(19);
    expect(backfill).toBeLessThan(60);
    // Once per stall period, not once per round.
    logged.length = 0;
    await watch.tick(later + 1_000);
    expect(logged.some((l) => l.runId === runId)).toBe(false);

    // A batch that failed for good more often than allowed counts as failed: the run ends, with its records
    // among the run's failures.
    const victim = batches[2]!;
    await exhaustStalledCount(victim);
    await ctx.queues.backfill.resume();
    await failedForGood(victim.id ?? '');
    await waitFor(
      'the other batches to end',
      async () => ((await ctx.runs.progress(runId))?.batchesDone ?? 0) >= batches.length - 1 || undefined,
      60_000,
      100,
    );
    const waiting = await ctx.runs.get(runId);
    expect(waiting?.state).toBe('processing');
    // `sync --wait` and a sync asked for check whether the run can still end: a batch that just failed for good
    // is about to be queued again, so the run is not stopped as lost; one that failed a minute before is gone.
    const bounds = { staleMs: 15 * 60_000, noJobGraceMs: 0 };
    expect(await deadRunReason(ctx.queues, waiting!, bounds)).toBeNull();
    expect(
      (await deadRunReason(ctx.queues, waiting!, bounds, Date.now() + 120_000)) as DeadRun,
    ).toMatchObject({
      code: 'no_jobs',
    });
    await watch.tick();
    const run = await runEnded(system, runId, 10_000);
    expect(run.state).toBe('done');
    const records = parseJobData('batch', victim.data).recordIds;
    expect(run.totals.failed).toBe(records.length);
    expect(run.errors.filter((e) => e.code === 'BATCH_FAILED').map((e) => e.recordId)).toEqual(
      records.slice(0, 20),
    );
    expect(await ctx.queues.backfill.getJob(`${victim.id}-revived1`)).toBeUndefined();
  });

  it('queues an update of changed reports that failed for good again, and its marks are written', {
    timeout: 60_000,
  }, async () => {
    const { ctx, installationId } = system;
    const { pendingSlugs } = ctx.pipeline;
    await ctx.queues.realtime.pause();
    await enqueueSlugUpdate(ctx.pipeline.updateQueue(), installationId, 'no-such-report-here');
    const update = await waitFor(
      'the update job',
      async () => (await ctx.queues.realtime.getDelayed()).find((j) => j.name === 'slug-update'),
      5_000,
    );
    await system.ctx.redis.hset(
      ctx.queues.realtime.toKey(update.id ?? ''),
      'stc',
      '11',
      'defa',
      STALLED_FOR_GOOD,
    );
    await ctx.queues.realtime.resume();
    await waitFor(
      'the update to fail',
      async () => ((await ctx.queues.realtime.getJob(update.id ?? ''))?.failedReason ? true : undefined),
      30_000,
    );
    // Its mark stays (marks are cleared once written); without the watch only the installation's next change
    // would queue a job to take it.
    expect(await pendingSlugs.take(installationId, 'urgent', 10)).toHaveLength(1);
    await new LivenessWatch(ctx.pipeline).tick();
    await waitFor(
      'the mark to be taken and cleared',
      async () => ((await pendingSlugs.take(installationId, 'urgent', 10)).length === 0 ? true : undefined),
      30_000,
    );
    expect(
      logged.some(
        (l) => l.msg === 'an update of changed reports failed for good: its marks are queued again',
      ),
    ).toBe(true);
  });
});
