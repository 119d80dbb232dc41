import { RETRY_BUDGET } from '../retry-budget.js';
import { firstOriginOf } from './batch/origin.js';
import type { BatchJob } from './batch-job.js';
import { type BatchOutcome, type BatchTargets, enrichBatch } from './enrich-batch.js';
import type { Pipeline } from './pipeline.js';
import { enqueueSlugUpdate } from './score-changes/updates.js';

/**
 * One batch run where it is asked for (a job's handler, an event's update, an admin's command), then another
 * update of each slug whose report changed while the batch had it in hand (BatchOutcome.staleSlugs), and a
 * later batch for the records the CRM still refused for now (row locks), up to the record-retry budget. Every
 * caller gets both: a refused record of a score change or an admin's decision is written later, not dropped.
 */
export async function enrichNow(p: Pipeline, targets: BatchTargets, job: BatchJob): Promise<BatchOutcome> {
  const outcome = await enrichBatch(p.deps, targets, job);
  for (const slug of outcome.staleSlugs) await enqueueSlugUpdate(p.updateQueue(), job.installationId, slug);
  if (outcome.retryRecordIds.length > 0) await retryRefused(p, job, outcome.retryRecordIds);
  await followMerges(p, targets, job, outcome.vanished ?? []);
  return outcome;
}

/** Fan-outs by slug: a report's change, its publication. Their records come from the link index. */
const FAN_OUT_ORIGINS: readonly string[] = ['report-change', 'report-published'];
const SURVIVORS_SUFFIX = '-survivors';

/**
 * A fan-out by slug that met a record the CRM no longer has: where it was merged away before its change event
 * arrived (the merge kept its link on the survivor, or the event came first), the survivor gets this update
 * now, and the forwarding is kept for the next fan-outs until the merge's own change moves the link.
 */
export async function followMerges(
  p: Pipeline,
  targets: BatchTargets,
  job: BatchJob,
  vanished: readonly string[],
): Promise<void> {
  const { connector } = targets;
  if (vanished.length === 0 || !connector.survivorsOf) return;
  if (!FAN_OUT_ORIGINS.includes(firstOriginOf(job).kind) || job.batchId.endsWith(SURVIVORS_SUFFIX)) return;
  const survivors = await connector.survivorsOf(vanished);
  if (survivors.size === 0) return;
  const bySurvivor = new Map<string, string[]>();
  for (const [loser, survivor] of survivors)
    bySurvivor.set(survivor, [...(bySurvivor.get(survivor) ?? []), loser]);
  for (const [survivor, losers] of bySurvivor)
    await p.mergedInto.record(job.installationId, losers, survivor);
  await enrichNow(p, targets, {
    installationId: job.installationId,
    batchId: `${job.batchId}${SURVIVORS_SUFFIX}`,
    mode: job.mode,
    recordIds: [...bySurvivor.keys()],
    origin: job.origin,
  });
}

async function retryRefused(p: Pipeline, job: BatchJob, recordIds: string[]): Promise<void> {
  const attempt = Number(/-retry(\d+)$/.exec(job.batchId)?.[1] ?? 0) + 1;
  if (attempt > RETRY_BUDGET.recordRetry.attempts) return;
  await p.enqueueBatch(
    'realtime',
    {
      installationId: job.installationId,
      batchId: `${job.batchId.replace(/-retry\d+$/, '')}-retry${attempt}`,
      mode: job.mode,
      recordIds,
      // The first batch's origin decides again; a run's reports stay in its cache, where the retry reads them.
      origin: { kind: 'retry', of: firstOriginOf(job) },
    },
    { delay: RETRY_BUDGET.recordRetry.baseDelayMs * 2 ** attempt },
  );
}
