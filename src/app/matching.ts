import { decideMatch } from '../matching/decide.js';
import { normalizeCompanyName } from '../matching/normalize.js';
import { searchQueryFor } from '../matching/query.js';
import type { MatchingStrategy } from '../pipeline/matching-strategy.js';

/** The project's matcher, as the pipeline sees it. Review candidates keep stage and score for the admin page. */
export const defaultMatching: MatchingStrategy = {
  searchLimit: 10,
  queryFor: (company) => searchQueryFor(company),
  normalizeName: (name) => normalizeCompanyName(name),
  decide(company, candidates) {
    const decision = decideMatch(company, candidates);
    if (decision.status !== 'needs_review') return decision;
    const bySlug = new Map(candidates.map((c) => [c.slug, c]));
    return {
      ...decision,
      candidates: decision.candidates.map((c) => ({
        ...c,
        stage: bySlug.get(c.slug)?.stage ?? null,
        score: bySlug.get(c.slug)?.score ?? null,
      })),
    };
  },
};
