import { type JobsOptions, Queue } from 'bullmq';
import type { RedisClient } from '../redis.js';
import { RETRY_BUDGET } from '../retry-budget.js';
import { Keys } from '../storage/keys.js';
import type { JobData, JobName, JobQueue, JobToAdd } from './jobs.js';
import type { QueueName } from './queue-names.js';

/**
 * Three queues so that bulk work never holds back urgent work: `backfill` (listing pages and their batches),
 * `realtime` (webhook- and change-driven updates), `schedule` (the reconcile sweep and change polls).
 */

export { QUEUE_NAMES, type QueueName } from './queue-names.js';

export const DEFAULT_JOB_OPTIONS: JobsOptions = {
  attempts: RETRY_BUDGET.job.attempts,
  backoff: { type: 'exponential', delay: RETRY_BUDGET.job.baseDelayMs },
  // Completed jobs are not needed; failed ones are kept a week for inspection, then removed.
  removeOnComplete: { age: 3_600, count: 1_000 },
  removeOnFail: { age: 7 * 24 * 3_600, count: 5_000 },
};

export class Queues {
  readonly backfill: Queue;
  readonly realtime: Queue;
  readonly schedule: Queue;

  constructor(
    /** The queues' own connection (it queues commands while reconnecting): probes check it before use. */
    readonly connection: RedisClient,
    readonly prefix: string,
  ) {
    const keys = new Keys(prefix);
    const opts = (name: QueueName) => ({
      connection,
      prefix: keys.queuePrefix(name),
      defaultJobOptions: DEFAULT_JOB_OPTIONS,
    });
    this.backfill = new Queue('backfill', opts('backfill'));
    this.realtime = new Queue('realtime', opts('realtime'));
    this.schedule = new Queue('schedule', opts('schedule'));
  }

  /** Adds job `name` (pipeline/jobs.ts) to one of the queues it runs on. */
  async add<N extends JobName>(
    queue: JobQueue<N>,
    name: N,
    data: JobData<N>,
    opts?: JobsOptions,
  ): Promise<void> {
    await this[queue].add(name, data, opts);
  }

  async addBulk<N extends JobName>(queue: JobQueue<N>, name: N, jobs: JobToAdd<N>[]): Promise<void> {
    await this[queue].addBulk(jobs.map((j) => ({ name, data: j.data, ...(j.opts ? { opts: j.opts } : {}) })));
  }

  /** Runs job `name` every `everyMs` on the schedule queue; one scheduler per id. */
  async every<N extends 'poll' | 'reconcile' | 'score-changes'>(
    schedulerId: string,
    everyMs: number,
    name: N,
    data: JobData<N>,
  ): Promise<void> {
    await this.schedule.upsertJobScheduler(schedulerId, { every: everyMs }, { name, data });
  }

  /** Whether there was such a schedule. */
  async stopSchedule(schedulerId: string): Promise<boolean> {
    return this.schedule.removeJobScheduler(schedulerId);
  }

  all(): Queue[] {
    return [this.backfill, this.realtime, this.schedule];
  }

  async counts(): Promise<
    Record<QueueName, { waiting: number; active: number; delayed: number; failed: number }>
  > {
    const entries = await Promise.all(
      this.all().map(async (q) => {
        const c = await q.getJobCounts('waiting', 'active', 'delayed', 'failed', 'prioritized');
        return [
          q.name,
          {
            waiting: (c.waiting ?? 0) + (c.prioritized ?? 0),
            active: c.active ?? 0,
            delayed: c.delayed ?? 0,
            failed: c.failed ?? 0,
          },
        ] as const;
      }),
    );
    return Object.fromEntries(entries) as Record<
      QueueName,
      { waiting: number; active: number; delayed: number; failed: number }
    >;
  }

  async close(): Promise<void> {
    await Promise.all(this.all().map((q) => q.close()));
  }
}

/**
 * One part of a job id. BullMQ job ids may not contain ':'; ours are built from installation ids, slugs and
 * event ids joined with '-'. Every character outside [A-Za-z0-9_.] (so '-' and '~' too) becomes '~' and exactly
 * four hex digits of its UTF-16 code unit: fixed width, so no two inputs share an encoding, and parts joined
 * with '-' cannot run into each other.
 */
export function jobIdPart(value: string): string {
  return value.replace(/[^A-Za-z0-9_.]/g, (c) => `~${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * What jobIdPart made of a valid id before it was one-to-one: the list job of a run started then is named so
 * (run-liveness.ts), and so were the polls an upgrade step retires (migrations/005-polls-under-old-ids.ts).
 */
export function legacyJobIdPart(value: string): string {
  return value.replace(/[^A-Za-z0-9_.-]/g, (c) => `~${c.charCodeAt(0).toString(16)}`);
}
