import { normalizeCompanyName } from '../matching/normalize.js';
import { decideRequestedReport } from '../matching/requested.js';
import { findMatch, reportMayConcern } from '../matching/retrieve.js';
import type { MatchCandidate, MatchingStrategy } from '../pipeline/matching-strategy.js';

/**
 * The project's matcher, as the pipeline sees it: the rules are all in src/matching/ (query forms and
 * retrieval in retrieve.ts, the decision in decide.ts). Review candidates keep stage and score for the admin
 * page.
 */
const SEARCH_LIMIT = 10;

export const defaultMatching: MatchingStrategy = {
  searchLimit: SEARCH_LIMIT,
  async find(company, search, rejected) {
    const found = new Map<string, MatchCandidate>();
    const { decision, queries } = await findMatch(
      company,
      async (q, limit) => {
        const hits = await search(q, limit);
        for (const hit of hits) found.set(hit.slug, hit);
        return hits;
      },
      SEARCH_LIMIT,
      { rejected },
    );
    if (decision.status !== 'needs_review') return { outcome: decision, queries };
    return {
      outcome: {
        ...decision,
        candidates: decision.candidates.map((c) => ({
          ...c,
          stage: found.get(c.slug)?.stage ?? null,
          score: found.get(c.slug)?.score ?? null,
        })),
      },
      queries,
    };
  },
  judgeRequested(company, report) {
    const decision = decideRequestedReport(company, report);
    if (decision.status !== 'needs_review') return decision;
    return {
      ...decision,
      candidates: decision.candidates.map((c) => ({
        ...c,
        stage: report.stage ?? null,
        score: report.score ?? null,
      })),
    };
  },
  normalizeName: (name) => normalizeCompanyName(name),
  mayConcern: (normalizedName, reportName) => reportMayConcern(normalizedName, reportName),
};
