import { decideMatch } from './decide.js';
import { normalizeCompanyName } from './normalize.js';
import { queryFormsFor } from './query.js';
import type { MatchCandidate, MatchCompany, MatchDecision, SearchEvidence } from './schemas.js';

/**
 * Finding the candidates for a record, whatever the service's search does with apostrophes, dots, hyphens,
 * ampersands and accents. Each query form (see queryFormsFor) is searched in turn, their results merged,
 * until one returns a report with exactly the record's name: a form that returns only other companies (a
 * common word filling the results, or nothing) says nothing about whether the next form would find it.
 */

/** Runs one search; the candidates come back with names (hits without one are completed by the caller). */
export type SearchFn = (q: string, limit: number) => Promise<readonly MatchCandidate[]>;

export interface Retrieved {
  candidates: MatchCandidate[];
  /** The queries sent, in order; their count is the record's search cost. */
  queries: string[];
  evidence: SearchEvidence;
}

export async function retrieveCandidates(
  company: Pick<MatchCompany, 'name'>,
  search: SearchFn,
  limit: number,
): Promise<Retrieved> {
  const name = normalizeCompanyName(company.name);
  const queries: string[] = [];
  const bySlug = new Map<string, MatchCandidate>();
  let complete = false;
  for (const q of queryFormsFor(company.name)) {
    queries.push(q);
    const hits = await search(q, limit);
    for (const hit of hits) if (!bySlug.has(hit.slug)) bySlug.set(hit.slug, hit);
    if (hits.some((hit) => normalizeCompanyName(hit.name) === name)) {
      complete = hits.length < limit;
      break;
    }
  }
  return { candidates: [...bySlug.values()], queries, evidence: { complete } };
}

export interface Matched {
  decision: MatchDecision;
  candidates: MatchCandidate[];
  queries: string[];
}

/** Retrieval and decision together: what the pipeline and the evaluation both run for a record. */
export async function findMatch(company: MatchCompany, search: SearchFn, limit: number): Promise<Matched> {
  const { candidates, queries, evidence } = await retrieveCandidates(company, search, limit);
  return { decision: decideMatch(company, candidates, evidence), candidates, queries };
}
