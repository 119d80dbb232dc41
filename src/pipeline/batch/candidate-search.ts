import type { CompanyRecord } from '../../crm/connector.js';
import type { LinkIndex } from '../../storage/link-index.js';
import type { MatchCandidate, MatchingStrategy, MatchOutcome } from '../matching-strategy.js';
import type { ReportReader } from '../report-reader.js';

/**
 * The candidate search of one record: the strategy (src/matching, behind `MatchingStrategy`) decides what to
 * search and what links; this step gives it a search of the report service (through the key's report cache, summary
 * hits completed with their report) and the slugs a person rejected for the record. It is the only place the
 * batch meets matching.
 */
export async function searchAndDecide(
  context: {
    index: LinkIndex;
    matching: MatchingStrategy;
    reader: ReportReader;
    installationId: string;
  },
  record: CompanyRecord,
): Promise<MatchOutcome> {
  const { index, matching, reader, installationId } = context;
  const rejected = await index.reviews.rejectedSlugs(installationId, record.id);
  const search = async (q: string, limit: number): Promise<MatchCandidate[]> => {
    const hits = await reader.search(q, limit);
    const candidates: MatchCandidate[] = [];
    for (const hit of hits) {
      let name = hit.name;
      let extra: Partial<MatchCandidate> = {};
      if (name === undefined) {
        // Summary hits (GraphQL promises only slug and score) need the report for its name.
        if (rejected.has(hit.slug)) continue;
        const read = await reader.read(hit.slug);
        if (read.kind !== 'report') continue;
        name = read.report.name;
        extra = {
          industry: read.report.industry,
          geography: read.report.geography,
          stage: read.report.stage,
        };
      }
      candidates.push({
        slug: hit.slug,
        name,
        industry: hit.industry ?? null,
        geography: hit.geography ?? null,
        stage: hit.stage ?? null,
        score: typeof hit.score === 'number' ? hit.score : (hit.score?.overall ?? null),
        description: hit.description ?? null,
        ...extra,
      });
    }
    return candidates;
  };
  const { outcome } = await matching.find(record, search, rejected);
  return outcome;
}
