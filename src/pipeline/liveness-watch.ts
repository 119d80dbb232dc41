import { setTimeout as sleep } from 'node:timers/promises';
import type { Job, Queue } from 'bullmq';
import { z } from 'zod';
import { emptyBatchResult, laneOf, MAX_ERRORS_PER_BATCH, type RunProgress } from '../storage/runs.js';
import { batchJobSchema } from './batch-job.js';
import { JOBS } from './jobs.js';
import type { Pipeline } from './pipeline.js';
import { QUEUE_NAMES } from './queue-names.js';
import { MAX_REVIVALS, revivalOf, revivedJobId } from './run-liveness.js';
import { queueSlugUpdate } from './score-changes/updates.js';

/**
 * Each worker process's own loop that keeps runs moving while workers die, and says so when they do not:
 * - a job of a run under way that failed for good (its attempts ran out, or BullMQ's stalled count did while
 *   workers were killed under it: "job stalled more than allowable limit") is queued again under a new id, up
 *   to MAX_REVIVALS times; a batch that failed that often is counted as failed, so its run ends with those
 *   records among its failures instead of waiting for it for good; an update of changed reports that failed
 *   for good has its installation's marks queued again;
 * - a lane (queue) whose waiting work has not moved for `stallMs`, or a run under way without progress for as
 *   long, is logged at warn with what it waits for;
 * - each lane's oldest waiting job's queue time goes to Redis, which `/metrics` shows as an age (one read per
 *   scrape, whatever the number of installations).
 * Every process runs it; what it does is idempotent (revived ids are derived from the failed job's id, so two
 * processes queue one job; a failed batch is counted only where no result of it exists).
 */

export interface LivenessOptions {
  /** How often the loop runs. */
  intervalMs: number;
  /** How long a lane or run may go without progress, while work waits, before it is logged. */
  stallMs: number;
  /** Times a run's job that failed for good is queued again before its batch counts as failed. */
  maxRevivals: number;
}

export const DEFAULT_LIVENESS: LivenessOptions = {
  intervalMs: 5_000,
  stallMs: 15_000,
  maxRevivals: MAX_REVIVALS,
};

/**
 * Failed jobs are read again from this long before the previous sweep: a process killed in the middle of one
 * leaves none behind (the others' sweeps overlap too).
 */
const SWEEP_OVERLAP_MS = 60_000;
/** How long closing the workers waits for a round under way. */
const STOP_WAIT_MS = 3_000;
/** What a process's first sweep reads: a run without progress for longer is stopped as stale anyway. */
const FIRST_SWEEP_MS = 3_600_000;
/**
 * Jobs of each state looked at to name a stalled run's oldest, oldest first: a run keeps at most 8 batches
 * queued (handlers/list.ts), so a few runs' worth.
 */
const RUN_JOBS_LOOKED_AT = 200;

/** A batch of a run (a sync's or a preview's), with its run. */
const runBatchSchema = batchJobSchema.transform((job, ctx) => {
  if (job.origin.kind !== 'sync' && job.origin.kind !== 'preview') {
    ctx.addIssue({ code: 'custom', message: 'not a run’s batch' });
    return z.NEVER;
  }
  return { job, runId: job.origin.runId };
});

/** A job as the warnings name it. */
interface NamedJob {
  id: string;
  name: string;
  state: string;
  queuedSecondsAgo: number;
  attemptsMade: number;
  failedReason?: string;
}

export class LivenessWatch {
  private readonly options: LivenessOptions;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private sweptAt: number | null = null;
  /** When each lane or run was last logged as stalled: once per `stallMs` while it stays so. */
  private readonly warnedAt = new Map<string, number>();

  constructor(
    private readonly pipeline: Pipeline,
    options: Partial<LivenessOptions> = {},
  ) {
    this.options = { ...DEFAULT_LIVENESS, ...options };
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.tickInBackground(), this.options.intervalMs);
    this.timer.unref();
  }

  /** Stops the rounds; waits for one under way, but not past STOP_WAIT_MS (Redis may be away). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.running) await Promise.race([this.running, sleep(STOP_WAIT_MS, undefined, { ref: false })]);
  }

  private tickInBackground(): void {
    if (this.running) return;
    // A loop has no caller to throw to: a Redis outage is logged, and the next round tries again.
    this.running = this.tick()
      .catch((err: unknown) => this.pipeline.deps.logger.warn({ err }, 'liveness watch round failed'))
      .finally(() => {
        this.running = null;
      });
  }

  /** One round; tests call it with their own clock. */
  async tick(now = Date.now()): Promise<void> {
    await this.reviveFailed(now);
    await this.watchLanes(now);
    await this.watchRuns(now);
  }

  // ---- jobs of runs that failed for good ---------------------------------------------------------------

  private async reviveFailed(now: number): Promise<void> {
    const { redis, queues } = this.pipeline.deps;
    const since = this.sweptAt === null ? now - FIRST_SWEEP_MS : this.sweptAt - SWEEP_OVERLAP_MS;
    // Run jobs live on the backfill queue (a run's record retries count in no run); updates for report changes
    // on the realtime queue (and on the backfill queue when an older version queued them).
    for (const queue of [queues.backfill, queues.realtime]) {
      for (const id of await redis.zrangebyscore(queue.toKey('failed'), since, '+inf')) {
        if (id.startsWith('batch-') || id.startsWith('list-')) await this.revive(queue, id, now);
        else await this.requeueUpdate(queue, id);
      }
    }
    this.sweptAt = now;
  }

  /**
   * A `slug-update` job that failed for good leaves its marks (they are cleared only once written), but no job
   * takes them until the installation's next change: its lane's job is queued again (deduplicated per
   * installation and lane, so every process may).
   */
  private async requeueUpdate(queue: Queue, id: string): Promise<void> {
    const { installations, logger } = this.pipeline.deps;
    const job = await queue.getJob(id);
    if (job?.name !== 'slug-update' || !(await job.isFailed())) return;
    const parsed = JOBS['slug-update'].schema.safeParse(job.data);
    if (!parsed.success) return;
    const { installationId, hot } = parsed.data;
    // A stopped installation's marks wait for it to be connected again (a sync then reads every linked report).
    if ((await installations.get(installationId))?.status !== 'connected') return;
    const lane = hot ? 'hot' : 'urgent';
    if ((await this.pipeline.pendingSlugs.take(installationId, lane, 1)).length === 0) return;
    await queueSlugUpdate(this.pipeline.deps.queues, installationId, hot === true);
    logger.warn(
      { installationId, lane, jobId: id, reason: job.failedReason, attemptsMade: job.attemptsMade },
      'an update of changed reports failed for good: its marks are queued again',
    );
  }

  private async revive(queue: Queue, id: string, now: number): Promise<void> {
    const { runs, logger } = this.pipeline.deps;
    const job = await queue.getJob(id);
    if (!job || !(await job.isFailed())) return;
    const work = runWorkOf(job);
    if (!work) return;
    const state = await runs.state(work.runId);
    // A stopped run's work is done elsewhere or not at all; a done run's was done by another run of the job.
    if (work.kind === 'list' ? state !== 'listing' : state !== 'listing' && state !== 'processing') return;
    if (work.kind === 'batch' && (await runs.hasBatch(work.runId, work.batchId))) return;
    const next = revivedJobId(id);
    if (await queue.getJob(next)) return;
    const seen = { runId: work.runId, jobId: id, reason: job.failedReason, attemptsMade: job.attemptsMade };
    if (revivalOf(id) >= this.options.maxRevivals) {
      if (work.kind === 'list') {
        // Its run is stopped as lost (run-liveness.ts) when a sync is asked for or followed.
        if (this.dueWarning(`listing:${id}`, now))
          logger.warn(seen, 'a run’s listing failed for good too often: not queued again');
        return;
      }
      const result = emptyBatchResult();
      const reason = `the batch failed ${revivalOf(id) + 1} times (last: ${job.failedReason ?? 'no reason'})`;
      result.records = work.recordIds.length;
      result.failed = work.recordIds.length;
      result.errors = work.recordIds
        .slice(0, MAX_ERRORS_PER_BATCH)
        .map((recordId) => ({ recordId, code: 'BATCH_FAILED', message: reason }));
      if (await runs.recordFailedBatch(work.runId, work.batchId, result))
        logger.warn(
          { ...seen, records: work.recordIds.length },
          'a run’s batch counted as failed: it failed too often',
        );
      return;
    }
    await queue.add(job.name, work.data, { jobId: next });
    logger.warn({ ...seen, queuedAs: next }, 'a run’s job failed for good: queued again under a new id');
  }

  // ---- lanes ---------------------------------------------------------------------------------------------

  private async watchLanes(now: number): Promise<void> {
    const { redis, keys, queues, logger, metrics } = this.pipeline.deps;
    const oldest: Record<string, number> = {};
    for (const lane of QUEUE_NAMES) {
      const queue = queues[lane];
      const heads = await queue.getJobs(['wait', 'prioritized'], 0, 0, true);
      const head = heads.reduce<Job | null>(
        (a, j) => (a === null || j.timestamp < a.timestamp ? j : a),
        null,
      );
      oldest[lane] = head?.timestamp ?? 0;
      metrics?.oldestQueuedSeconds.set({ queue: lane }, head ? Math.max(0, now - head.timestamp) / 1000 : 0);
      if (!head || now - head.timestamp < this.options.stallMs) continue;
      const [, lastDone] = await redis.zrevrange(queue.toKey('completed'), 0, 0, 'WITHSCORES');
      const doneAgo = lastDone === undefined ? null : now - Number(lastDone);
      if (doneAgo !== null && doneAgo < this.options.stallMs) continue;
      if (!this.dueWarning(`lane:${lane}`, now)) continue;
      const active = await queue.getJobs(['active'], 0, 4, true);
      logger.warn(
        {
          lane,
          oldestJob: await named(head, now),
          lastJobDoneSecondsAgo: doneAgo === null ? null : Math.round(doneAgo / 1000),
          active: await Promise.all(active.map((j) => named(j, now))),
        },
        `lane ${lane}: no job done for ${Math.round(this.options.stallMs / 1000)} s while work waits`,
      );
    }
    await redis.hset(keys.laneOldestQueued(), oldest);
  }

  // ---- runs ----------------------------------------------------------------------------------------------

  private async watchRuns(now: number): Promise<void> {
    const { runs, logger } = this.pipeline.deps;
    for (const runId of await runs.underWay()) {
      const run = await runs.progress(runId);
      if (!run || run.state === 'done' || run.state === 'stopped') {
        await runs.forgetEnded(runId);
        this.warnedAt.delete(`run:${runId}`);
        continue;
      }
      if (now - run.progressAt < this.options.stallMs) continue;
      if (run.batchesTotal !== null && run.batchesDone >= run.batchesTotal) continue;
      if (!this.dueWarning(`run:${runId}`, now)) continue;
      const jobs = await this.jobsOf(run, now);
      logger.warn(
        {
          runId,
          installationId: run.installationId,
          kind: run.kind,
          lane: laneOf(run.kind),
          queue: 'backfill',
          state: run.state,
          batchesDone: run.batchesDone,
          batchesTotal: run.batchesTotal,
          waitingFor: jobs[0] ?? null,
          jobs: jobs.length,
        },
        `sync run ${runId}: no progress for ${Math.round((now - run.progressAt) / 1000)} s while it waits for ${
          jobs[0]
            ? `${jobs[0].name} job ${jobs[0].id} (${jobs[0].state})`
            : `jobs not among the first ${RUN_JOBS_LOOKED_AT} of any state of the backfill queue`
        }`,
      );
    }
  }

  /** The run's jobs still in the backfill queue (queued, running or failed lately), oldest first. */
  private async jobsOf(run: RunProgress, now: number): Promise<NamedJob[]> {
    const queue = this.pipeline.deps.queues.backfill;
    const last = RUN_JOBS_LOOKED_AT - 1;
    const jobs = [
      ...(await queue.getJobs(['active', 'wait', 'prioritized', 'delayed'], 0, last, true)),
      // The newest failures: a run's are recent, and the failed set keeps a week's.
      ...(await queue.getJobs(['failed'], 0, last, false)),
    ];
    const mine = jobs.filter((j) => runWorkOf(j)?.runId === run.id);
    mine.sort((a, b) => a.timestamp - b.timestamp);
    return Promise.all(mine.map((j) => named(j, now)));
  }

  private dueWarning(key: string, now: number): boolean {
    const last = this.warnedAt.get(key);
    if (last !== undefined && now - last < this.options.stallMs) return false;
    this.warnedAt.set(key, now);
    return true;
  }
}

type RunWork =
  | { kind: 'list'; runId: string; data: unknown }
  | { kind: 'batch'; runId: string; batchId: string; recordIds: string[]; data: unknown };

/** The run a job works for, and what to queue to do it again; null for any other job. */
function runWorkOf(job: Job): RunWork | null {
  if (job.name === 'list') {
    const list = JOBS.list.schema.safeParse(job.data);
    // Its payload holds the listing's saved place: queued again, it resumes there.
    return list.success ? { kind: 'list', runId: list.data.runId, data: list.data } : null;
  }
  if (job.name !== 'batch') return null;
  const parsed = runBatchSchema.safeParse(job.data);
  if (!parsed.success) return null;
  const { job: batch, runId } = parsed.data;
  // Some of its records may be written already: the listing's copy would make them look changed and write them
  // again, so the new job reads them from the CRM (as a batch's later attempts do).
  const { records: _listed, ...data } = batch;
  return { kind: 'batch', runId, batchId: batch.batchId, recordIds: batch.recordIds, data };
}

async function named(job: Job, now: number): Promise<NamedJob> {
  return {
    id: job.id ?? '',
    name: job.name,
    state: await job.getState(),
    queuedSecondsAgo: Math.round((now - job.timestamp) / 1000),
    attemptsMade: job.attemptsMade,
    ...(job.failedReason ? { failedReason: job.failedReason } : {}),
  };
}

/**
 * `/metrics`: each lane's oldest waiting job's age, from what the workers' watch last wrote (one read, whatever
 * the number of installations); it keeps growing while no worker runs to take the job.
 */
export async function setOldestQueuedMetric(pipeline: Pipeline, now = Date.now()): Promise<void> {
  const { redis, keys, metrics } = pipeline.deps;
  if (!metrics) return;
  const stored = await redis.hgetall(keys.laneOldestQueued());
  for (const lane of QUEUE_NAMES) {
    const at = Number(stored[lane] ?? 0);
    metrics.oldestQueuedSeconds.set({ queue: lane }, at > 0 ? Math.max(0, now - at) / 1000 : 0);
  }
}
