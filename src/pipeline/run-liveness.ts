import type { RunSummary, StopCode } from '../storage/runs.js';
import { jobIdPart, legacyJobIdPart, type Queues } from './queues.js';

/**
 * Whether a run under way can still end: a lost job (deleted, failed for good, its Redis state lost) must
 * never hold an installation's lane, or every later sync would join a run that never ends.
 */

export interface RunBounds {
  /** A run that has not moved (a page listed, a batch ended) for this long is stopped as stale. */
  staleMs: number;
  /**
   * A run found without any job left is stopped only once it has not moved for this long: its list job is
   * queued just after the run is (Pipeline.requestSync), and a batch's retry just after the batch.
   */
  noJobGraceMs: number;
}

/**
 * Long enough for a batch held back by rate limits and worker restarts (the stalled-job check takes one back
 * within 30 s); short enough that a sync asked for after a lost job starts within the quarter hour.
 */
export const DEFAULT_RUN_BOUNDS: RunBounds = { staleMs: 15 * 60_000, noJobGraceMs: 30_000 };

export interface DeadRun {
  code: Exclude<StopCode, 'superseded' | 'other'>;
  reason: string;
}

/** Why `run` can no longer end, or null while it can; an ended run is 'ended'. */
export async function deadRunReason(
  queues: Queues,
  run: RunSummary,
  bounds: RunBounds,
  now = Date.now(),
): Promise<DeadRun | 'ended' | null> {
  if (run.state === 'done' || run.state === 'stopped') return 'ended';
  const still = now - run.progressAt;
  if (still > bounds.staleMs) {
    return { code: 'stale', reason: `stale: no progress for ${Math.round(still / 1000)} s` };
  }
  if (still <= bounds.noJobGraceMs) return null;
  // A job of it that just failed for good is queued again by a worker's liveness watch within its round.
  if (await revivableFailure(queues, run.id, now)) return null;
  if (run.state === 'listing') {
    if (await listJobAlive(queues, run.id)) return null;
    return { code: 'no_jobs', reason: 'lost: its list job is gone from the queues' };
  }
  // Processing: its batches are on the backfill queue (retries on the realtime one); their ids are not kept,
  // so a run waiting for batches while neither queue holds any job has lost them.
  if (run.batchesTotal !== null && run.batchesDone >= run.batchesTotal) return null;
  const counts = await Promise.all(
    [queues.backfill, queues.realtime].map((q) =>
      q.getJobCountByTypes('waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'wait'),
    ),
  );
  if (counts.some((n) => n > 0)) return null;
  return { code: 'no_jobs', reason: 'lost: no job of it is left in the queues' };
}

/**
 * Times a run's job that failed for good (its attempts or its stalled count ran out) is queued again under a
 * new id (pipeline/liveness-watch.ts) before its batch counts as failed: every job of a run is idempotent,
 * and a fresh id starts with fresh attempts and a fresh stalled count, which a retry of the same job does not.
 */
export const MAX_REVIVALS = 5;

const REVIVED = /-revived(\d+)$/;

/** How many times the job with this id was queued again (0 for the job its run queued). */
export function revivalOf(jobId: string): number {
  return Number(REVIVED.exec(jobId)?.[1] ?? 0);
}

/** The id under which a failed job of a run is queued again. */
export function revivedJobId(jobId: string): string {
  return `${jobId.replace(REVIVED, '')}-revived${revivalOf(jobId) + 1}`;
}

/** How long after its failure a run's job still counts as about to be queued again (a watch round is 5 s). */
const REVIVAL_GRACE_MS = 60_000;

/** Whether a job of the run failed for good lately and the liveness watch will queue it again. */
async function revivableFailure(queues: Queues, runId: string, now: number): Promise<boolean> {
  const parts = [...new Set([jobIdPart(runId), legacyJobIdPart(runId)])];
  const ofRun = (id: string) =>
    parts.some(
      (part) => id === `list-${part}` || id.startsWith(`list-${part}-`) || id.startsWith(`batch-${part}-`),
    );
  // The failed set is scored by when each job failed: the last minute's ids, without their payloads.
  const recent = await queues.connection.zrangebyscore(
    queues.backfill.toKey('failed'),
    now - REVIVAL_GRACE_MS,
    '+inf',
  );
  return recent.some((id) => ofRun(id) && revivalOf(id) < MAX_REVIVALS);
}

/** Whether the run's list job is still queued, running or waiting to retry (not failed for good, not gone). */
async function listJobAlive(queues: Queues, runId: string): Promise<boolean> {
  // A run of older code named its list job with the older id encoding; a failed one is queued again under
  // another id.
  for (const part of new Set([jobIdPart(runId), legacyJobIdPart(runId)])) {
    let id = `list-${part}`;
    for (let revival = 0; revival <= MAX_REVIVALS; revival += 1, id = revivedJobId(id)) {
      const job = await queues.backfill.getJob(id);
      if (!job) {
        if (revival === 0) continue;
        break;
      }
      const state = await job.getState();
      if (state !== 'failed' && state !== 'completed' && state !== 'unknown') return true;
    }
  }
  return false;
}
