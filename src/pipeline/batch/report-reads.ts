import { slugProblem } from '../../reports/slug.js';
import type { BatchJob } from '../batch-job.js';
import type { ReadReport, ReportReader } from '../report-reader.js';
import { firstOriginOf } from './origin.js';
import { isPerRecordError, type Plan } from './plan.js';

export type ReportRead = ReadReport | { kind: 'error'; code: string; message: string };

/**
 * Step 2: each distinct linked report read once, from the key's report cache unless the service or a decision
 * said it changed since (report-reader.ts).
 */
export async function readLinkedReports(
  reader: ReportReader,
  plans: Iterable<Plan>,
  freshSlugs: string[],
): Promise<Map<string, ReportRead>> {
  const fresh = new Set(freshSlugs);
  const reads = new Map<string, ReportRead>();
  for (const plan of plans) {
    if (plan.kind !== 'linked' || reads.has(plan.slug)) continue;
    // A slug anyone can type into the CRM is checked before it goes near a URL: the record shows `error`.
    const problem = slugProblem(plan.slug);
    if (problem) {
      const shown = JSON.stringify(plan.slug.slice(0, 80));
      reads.set(plan.slug, { kind: 'error', code: 'INVALID_SLUG', message: `${problem}: ${shown}` });
      continue;
    }
    try {
      reads.set(plan.slug, await reader.read(plan.slug, { fresh: fresh.has(plan.slug) }));
    } catch (err) {
      if (!isPerRecordError(err)) throw err;
      reads.set(plan.slug, { kind: 'error', code: err.code, message: err.message });
    }
  }
  return reads;
}

/**
 * Epoch ms before which no kept read or search serves the batch (ReportReaderOptions.readSince).
 * - A sync or preview run's batch, and its retry: 0, reads kept by anyone serve it (change events and
 *   REPORT_CACHE_SECONDS keep them current); a reconcile run's: the run's start, so that every linked report is read
 *   from the service once per reconcile and a change whose webhook was missed is found, while the retry of a
 *   killed batch still reads nothing again. The start is the one in the run's id (storage/runs.ts names a run
 *   `<kind>-<installation>-<start ms, base 36>-<random>`); an id without one reads anew.
 * - A report change's batch (`slug-update`): 0, since no kept read older than the change serves it.
 * - Any other (a person's decision, a CRM change, a publication, a refresh): now, as before the report cache. Its
 *   decision is newer than any kept read, and a write is never made from a read older than the record's last
 *   write (batch/write.ts, keepChanged), so a kept read would leave the decision unwritten.
 */
export function readSinceOf(job: BatchJob, now = Date.now()): number {
  const origin = firstOriginOf(job);
  if (origin.kind === 'preview' || origin.kind === 'report-change') return 0;
  if (origin.kind !== 'sync') return now;
  if (job.mode !== 'reconcile') return 0;
  const parts = origin.runId.split('-');
  const start = parts.length >= 4 ? Number.parseInt(parts[parts.length - 2] ?? '', 36) : Number.NaN;
  // A start in the future or implausibly old is not one: read anew.
  return Number.isFinite(start) && start > 1e12 && start <= now ? start : now;
}
