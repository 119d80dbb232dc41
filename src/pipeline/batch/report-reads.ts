import { slugProblem } from '../../reports/slug.js';
import type { ReadReport, ReportReader } from '../report-reader.js';
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
