import type { BatchJob } from './batch-job.js';
import { type BatchOutcome, type BatchTargets, enrichBatch } from './enrich-batch.js';
import type { Pipeline } from './pipeline.js';

/**
 * One batch run where it is asked for (a job's handler, an admin's command), then another update of each
 * slug whose report changed while the batch had it in hand (BatchOutcome.staleSlugs).
 */
export async function enrichNow(p: Pipeline, targets: BatchTargets, job: BatchJob): Promise<BatchOutcome> {
  const outcome = await enrichBatch(p.deps, targets, job);
  for (const slug of outcome.staleSlugs) await p.enqueueSlugUpdate(job.installationId, slug);
  return outcome;
}
