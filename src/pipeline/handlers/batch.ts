import { isPreview, runIdOf } from '../batch/origin.js';
import { isRunsFirstBatch } from '../batch/sizing.js';
import type { BatchJob } from '../batch-job.js';
import { enrichNow } from '../enrich-now.js';
import type { RunningJob } from '../jobs.js';
import type { Pipeline } from '../pipeline.js';

/**
 * `batch`: one batch of records (enrich-batch.ts), its result counted in its run; the records the CRM asked
 * to try again go to a retry batch (enrich-now.ts).
 */
export async function batch(p: Pipeline, start: BatchJob, job?: RunningJob<BatchJob>): Promise<void> {
  // A batch run again (a failure, a rate-limit delay, a killed worker) may have written some records
  // already: the listing's copy would make them look changed and write them again, so the records are read
  // from the CRM instead.
  const data: BatchJob = job && job.attemptsStarted > 1 ? { ...start, records: undefined } : start;
  const runId = runIdOf(data);
  // A superseded run's batches are the full run's to do: doing them too would read and write twice.
  if (runId && (await p.deps.runs.supersededBy(runId)) !== null) return;
  // Batches without a run come from events (retries of webhook work, report.completed): urgent. So is a run's
  // first batch: beside its run's other batches it would get a share of a slow key and be killed before it
  // wrote; urgent, the others hold back for its few requests and the first write lands in seconds.
  const { connector, client } = await p.deps.runtime.open(data.installationId, {
    urgent: runId === null || isRunsFirstBatch(data.batchId),
    preview: isPreview(data),
  });
  const { result } = await enrichNow(p, { connector, client }, data);
  if (runId) await p.deps.runs.recordBatch(runId, data.batchId, result);
}
