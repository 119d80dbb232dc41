import { DelayedError, type Job, UnrecoverableError, Worker } from 'bullmq';
import { z } from 'zod';
import { CrmError, CrmQuotaPausedError, CrmRateLimitedError } from '../crm/errors.js';
import { GateTimeoutError } from '../ratelimit/redis-gate.js';
import type { RedisClient } from '../redis.js';
import {
  ReportForbiddenError,
  ReportRateLimitedError,
  ReportServiceError,
  ReportUnauthorizedError,
} from '../reports/errors.js';
import { Keys } from '../storage/keys.js';
import { RecordLocksLostError, RecordLockTimeoutError } from '../storage/record-locks.js';
import {
  FixtureWriteRefusedError,
  InstallationNotFoundError,
  InstallationStoppedError,
  NoReportKeyError,
  PreviewWriteError,
} from './errors.js';
import { alertActivity } from './handlers/alert-activity.js';
import { batch } from './handlers/batch.js';
import { crmChange } from './handlers/crm-change.js';
import { list } from './handlers/list.js';
import { poll } from './handlers/poll.js';
import { reconcile } from './handlers/reconcile.js';
import { reportCompleted } from './handlers/report-completed.js';
import { reportEvent } from './handlers/report-event.js';
import { isJobName, type JobData, type JobName, parseJobData, type RunningJob } from './jobs.js';
import { type LivenessOptions, LivenessWatch } from './liveness-watch.js';
import type { Pipeline } from './pipeline.js';
import { Reschedule } from './reschedule.js';
import {
  drainScoreChanges,
  type FanOutDeps,
  scoreChanged,
  scoreChangedDeps,
  sweepScoreChanges,
} from './score-changes/fan-out.js';
import { slugUpdate, slugUpdateDeps } from './score-changes/slug-update.js';
import { kickScoreChanges } from './score-changes/updates.js';

/**
 * Workers and what a failure means for a job:
 * - an upstream rate limit or quota pause moves the job to delayed for exactly the wait (not an attempt, and
 *   only this job: other installations' jobs keep their pace);
 * - a problem a person must fix (disconnected, key revoked, scope missing) stops the job and marks the
 *   installation, instead of retrying for hours;
 * - everything else is transient and retried with backoff (queues.ts).
 */

/** Each job of the table (jobs.ts) and its handler (handlers/<job>.ts), with its parsed payload. */
type Handlers = {
  [N in JobName]: (data: JobData<N>, job: RunningJob<JobData<N>>) => Promise<unknown>;
};

function handlersOf(p: Pipeline): Handlers {
  // The score-change path's handlers get what they use, not the pipeline.
  const fanOut = scoreChangedDeps(p);
  const fanOutDeps: FanOutDeps = {
    inbox: p.deps.inbox,
    scoreChanged: (mark) => scoreChanged(fanOut, mark.slug, mark.since, mark.lane),
    kickScoreChanges: () => kickScoreChanges(p.deps.queues),
  };
  const updateDeps = slugUpdateDeps(p);
  return {
    list: (data, job) => list(p, data, job),
    batch: (data, job) => batch(p, data, job),
    'report-event': (data, job) => reportEvent(p, data, job.createdAt),
    'score-changes': (_data, job) =>
      job.queue === 'schedule' ? sweepScoreChanges(fanOutDeps) : drainScoreChanges(fanOutDeps),
    'slug-update': (data, job) => slugUpdate(updateDeps, data, job),
    'report-completed': (data) => reportCompleted(p, data),
    'alert-activity': (data) => alertActivity(p, data),
    'crm-change': (data) => crmChange(p, data),
    poll: (data) => poll(p, data),
    reconcile: (data) => reconcile(p, data),
  };
}

/** What a failed job's payload says about whom to stop, whatever its job; read without trusting its shape. */
const stopScopeSchema = z.object({
  installationId: z.string().optional().catch(undefined),
  runId: z.string().nullish().catch(undefined),
  /** A batch names its run in its origin (batch-job.ts); a retry's origin names none, as it counts in no run. */
  origin: z
    .object({ runId: z.string().optional().catch(undefined) })
    .optional()
    .catch(undefined),
});

/**
 * Each lane's BullMQ job lock (renewed every half of it while its worker lives) and stalled check: a killed
 * worker's job is taken again within their sum. BullMQ's 30 s each froze a run at every kill, and workers killed
 * every 5-10 s kept it from writing for more than a minute. Realtime jobs are short, and while a
 * killed worker's job stays active the next job of its lane (the same deduplication id) waits for it, so every
 * event of the installation waits for the check: 10 s and 5 s let events sent after a kill land 15 s later, 5 s
 * and 2 s still 6.3 s. 3 s and 1 s bring it near the p95 of 3 s; a worker whose event loop stalls for
 * 3 s loses its realtime job to another, which is at-least-once and idempotent like every job here.
 */
export const LANE_JOB_LOCKS = {
  backfill: { lockDuration: 10_000, stalledInterval: 5_000 },
  realtime: { lockDuration: 3_000, stalledInterval: 1_000 },
  schedule: { lockDuration: 10_000, stalledInterval: 5_000 },
} as const;

export interface WorkerOptions {
  connection: RedisClient;
  prefix: string;
  concurrency?: { backfill?: number; realtime?: number; schedule?: number };
  /** The process's liveness watch (liveness-watch.ts); tests shorten it or run its rounds themselves. */
  liveness?: Partial<LivenessOptions> | 'off';
}

export class PipelineWorkers {
  readonly workers: Worker[];
  /** Queues a run's jobs that failed for good again, and logs lanes and runs that stall. */
  readonly liveness: LivenessWatch;
  private readonly handlers: Handlers;

  constructor(
    private readonly pipeline: Pipeline,
    options: WorkerOptions,
  ) {
    this.handlers = handlersOf(pipeline);
    const keys = new Keys(options.prefix);
    const common = {
      connection: options.connection,
      // A worker killed twice in a row must not fail the job: it is at-least-once and idempotent.
      maxStalledCount: 10,
      // Completed jobs vanish fast; the run hash keeps the numbers.
      removeOnComplete: { age: 3600, count: 1000 },
    };
    this.workers = [
      new Worker('backfill', (job, token) => this.run(job, token), {
        ...common,
        ...LANE_JOB_LOCKS.backfill,
        prefix: keys.queuePrefix('backfill'),
        concurrency: options.concurrency?.backfill ?? 4,
      }),
      new Worker('realtime', (job, token) => this.run(job, token), {
        ...common,
        ...LANE_JOB_LOCKS.realtime,
        prefix: keys.queuePrefix('realtime'),
        concurrency: options.concurrency?.realtime ?? 8,
      }),
      new Worker('schedule', (job, token) => this.run(job, token), {
        ...common,
        ...LANE_JOB_LOCKS.schedule,
        prefix: keys.queuePrefix('schedule'),
        concurrency: options.concurrency?.schedule ?? 2,
      }),
    ];
    for (const w of this.workers) {
      // Failures are recorded on the job and in the run; this keeps a lost Redis connection from crashing us.
      w.on('error', (err) => this.pipeline.deps.logger.warn({ err, queue: w.name }, 'worker error'));
      w.on('failed', (job, err) =>
        this.pipeline.deps.logger.warn({ err, queue: w.name, job: job?.name, jobId: job?.id }, 'job failed'),
      );
    }
    this.liveness = new LivenessWatch(pipeline, options.liveness === 'off' ? {} : options.liveness);
    if (options.liveness !== 'off') this.liveness.start();
  }

  async waitUntilReady(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.waitUntilReady()));
  }

  isRunning(): boolean {
    return this.workers.every((w) => w.isRunning());
  }

  /** Finishes active jobs (or hands them back when they outlive the close), then disconnects. */
  async close(): Promise<void> {
    await this.liveness.stop();
    await Promise.all(this.workers.map((w) => w.close()));
  }

  private async run(job: Job, token: string | undefined): Promise<unknown> {
    try {
      const outcome = await this.dispatch(job);
      if (outcome instanceof Reschedule) {
        if (outcome.data !== undefined) await job.updateData(outcome.data);
        await job.moveToDelayed(Date.now() + outcome.delayMs, token);
        throw new DelayedError();
      }
      if (job.name === 'crm-change') {
        // The job is added when the change arrives (webhook or poll); a rate-limit delay keeps its timestamp.
        await this.pipeline.deps.latencies.record('crm', [(Date.now() - job.timestamp) / 1000]);
      }
      return outcome ?? null;
    } catch (err) {
      throw await this.classify(job, token, err);
    }
  }

  private dispatch(job: Job): Promise<unknown> {
    const { name } = job;
    if (!isJobName(name)) throw new UnrecoverableError(`unknown job ${name}`);
    return this.runHandler(name, job);
  }

  /** A payload of the wrong shape throws (a ZodError) and is retried like any transient failure. */
  private runHandler<N extends JobName>(name: N, job: Job): Promise<unknown> {
    const data = parseJobData(name, job.data);
    const running: RunningJob<JobData<N>> = {
      id: job.id ?? 'x',
      attemptsStarted: job.attemptsStarted,
      createdAt: job.timestamp,
      queue: job.queueName,
      updateData: async (next) => {
        await job.updateData(next);
      },
    };
    return this.handlers[name](data, running);
  }

  private async classify(job: Job, token: string | undefined, err: unknown): Promise<unknown> {
    if (err instanceof DelayedError) return err;
    const delay = delayFor(err);
    if (delay !== null) {
      await job.moveToDelayed(Date.now() + delay, token);
      return new DelayedError();
    }
    const scope = stopScopeSchema.safeParse(job.data);
    const { installationId, runId: payloadRunId, origin } = scope.success ? scope.data : {};
    const runId = payloadRunId ?? origin?.runId;
    const stop = stopReason(err);
    if (stop !== null) {
      if (installationId) {
        const { installations, runs } = this.pipeline.deps;
        if (stop.status) await installations.setStatus(installationId, stop.status, stop.reason);
        if (runId) await runs.stop(runId, stop.reason);
      }
      return new UnrecoverableError(stop.reason);
    }
    return err;
  }
}

function delayFor(err: unknown): number | null {
  if (err instanceof CrmRateLimitedError || err instanceof CrmQuotaPausedError)
    return Math.max(250, err.retryAfterMs);
  if (err instanceof ReportRateLimitedError) return Math.max(250, err.retryAfterMs ?? 5_000);
  if (err instanceof GateTimeoutError) return Math.max(250, err.waitMs);
  if (err instanceof RecordLockTimeoutError || err instanceof RecordLocksLostError) return 1_000;
  return null;
}

function stopReason(err: unknown): { reason: string; status?: 'disconnected' | 'key_invalid' } | null {
  if (err instanceof ReportUnauthorizedError) {
    return {
      reason: 'the report-service API key was refused (401): it is invalid or revoked; enter a new key',
      status: 'key_invalid',
    };
  }
  if (err instanceof ReportForbiddenError) {
    return {
      reason: 'the report-service API key lacks the read scope (403): create a key with read access',
      status: 'key_invalid',
    };
  }
  if (err instanceof NoReportKeyError) return { reason: err.message, status: 'key_invalid' };
  if (err instanceof FixtureWriteRefusedError || err instanceof PreviewWriteError)
    return { reason: err.message };
  if (err instanceof InstallationNotFoundError || err instanceof InstallationStoppedError)
    return { reason: err.message };
  if (err instanceof CrmError && !err.retryable) {
    return {
      reason: err.message,
      ...(err.code === 'CRM_DISCONNECTED' ? { status: 'disconnected' as const } : {}),
    };
  }
  if (err instanceof ReportServiceError && !err.retryable) return { reason: err.message };
  return null;
}
