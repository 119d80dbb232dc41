import type { JudgeRequested } from './batch/plan.js';
import type { MatchingStrategy } from './matching-strategy.js';
import type { ReportReader } from './report-reader.js';

/**
 * A requested report published: what the batch does with the record whose own submission `report.completed`
 * names. The report is read (through the batch's reader, so the report cache serves it) and matching judges it
 * against the record as it is in the CRM now: linked (source `request`) where the names agree as matching
 * would accept, else sent to review with that report as a candidate. Either way the request resolves (the
 * batch ends it once the record holds its new state). A report that cannot be read as published links
 * nothing and the request waits on.
 *
 * Other companies' publications leave a waiting record waiting (batch/plan.ts): only a link matching is sure
 * of, or the record's own report, ends its request.
 */
export function requestedReportJudge(matching: MatchingStrategy, reader: ReportReader): JudgeRequested {
  return async (record, slug) => {
    const read = await reader.read(slug);
    if (read.kind !== 'report') return null;
    const { report } = read;
    return matching.judgeRequested(record, {
      slug: report.slug,
      name: report.name,
      industry: report.industry,
      geography: report.geography,
      stage: report.stage,
      score: report.score.overall,
    });
  };
}
