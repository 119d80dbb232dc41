import { decideMatch } from './decide.js';
import type { MatchCandidate, MatchCompany, MatchDecision } from './schemas.js';

/**
 * `report.completed` naming a record's own submission: the service published a report for what the record
 * asked. That is not yet a reason to believe the report is the record's company (a service may answer a
 * submission with a report on another company), so it is linked only where matching would link it: the
 * decision rules (decide.ts) with that report as the only candidate, the search counted as complete since
 * nothing else was asked for. Anything else goes to a person: review, with the report as a candidate, also
 * when its name is unlike the record's (the rules would drop it; here it is the answer to the request, which a
 * person should see).
 */

export const REQUESTED_REPORT_WHY = 'published for this record’s report request';

export function decideRequestedReport(company: MatchCompany, report: MatchCandidate): MatchDecision {
  const decision = decideMatch(company, [report], { complete: true });
  if (decision.status === 'matched') return decision;
  const why =
    decision.status === 'needs_review'
      ? `${REQUESTED_REPORT_WHY}; ${decision.candidates[0]?.why ?? 'not certain'}`
      : `${REQUESTED_REPORT_WHY}; its name is unlike the record’s`;
  return {
    status: 'needs_review',
    candidates: [
      {
        slug: report.slug,
        name: report.name,
        industry: report.industry ?? null,
        geography: report.geography ?? null,
        why,
      },
    ],
    reason: `the report published for this record's request is not certain to be its company: ${decision.reason}`,
  };
}
