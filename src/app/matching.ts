import { decideMatch } from '../matching/decide.js';
import { normalizeCompanyName, stripLegalForms } from '../matching/normalize.js';
import { searchQueryFor } from '../matching/query.js';
import type { MatchingStrategy } from '../pipeline/matching-strategy.js';
import { nameToQuery } from '../reports/query.js';

/**
 * The project's matcher, as the pipeline sees it. Searches try the name as written first, then the name with
 * its punctuation read as word breaks and without "and" ("O'Brien & Sons" -> "O Brien Sons"), then its
 * longest word: the service's free-text rules are not published, and precision is kept by `decideMatch`, not
 * by the search. Review candidates keep stage and score for the admin page.
 */

const MIN_SINGLE_WORD = 5;

export function queriesFor(name: string | null): string[] {
  const primary = searchQueryFor({ name });
  if (primary === null) return [];
  const split = nameToQuery(stripLegalForms((name ?? '').replace(/[.'\u2019`´/]/g, ' ')))
    .split(' ')
    .filter((w) => w.toLowerCase() !== 'and')
    .join(' ');
  const longest = primary
    .split(/[\s-]+/)
    .filter((w) => w.length >= MIN_SINGLE_WORD)
    .sort((a, b) => b.length - a.length)[0];
  return [...new Set([primary, split, longest].filter((q): q is string => Boolean(q)))];
}

export const defaultMatching: MatchingStrategy = {
  searchLimit: 10,
  queriesFor: (company) => queriesFor(company.name),
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
