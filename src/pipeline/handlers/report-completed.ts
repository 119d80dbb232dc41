import { chunk } from '../../util/chunk.js';
import type { ReportCompletedJob } from '../jobs.js';
import type { Pipeline } from '../pipeline.js';

/**
 * `report-completed`: a newly published report may resolve one installation's records that had no match or
 * were waiting for review; those whose names it may concern are matched again in batches.
 */
export async function reportCompleted(p: Pipeline, data: ReportCompletedJob): Promise<void> {
  const { runtime, index, matching } = p.deps;
  const { connector, client } = await runtime.open(data.installationId);
  let reportName: string;
  try {
    reportName = (await client.getReport(data.slug)).name;
  } catch (err) {
    if ((err as { code?: string }).code === 'REPORTS_NOT_FOUND') return;
    throw err;
  }
  const fits: string[] = [];
  for (const [recordId, name] of await index.unlinkedNames(data.installationId)) {
    if (recordId === data.requestedRecordId) continue;
    if (matching.mayConcern(name, reportName)) fits.push(recordId);
  }
  for (const [i, ids] of chunk(fits, connector.limits.writeBatchSize).entries()) {
    await p.enqueueBatch('realtime', {
      installationId: data.installationId,
      batchId: `completed-${i}`,
      mode: 'full',
      recordIds: ids,
      origin: { kind: 'report-published' },
    });
  }
}
