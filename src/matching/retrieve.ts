import { decideMatch } from './decide.js';
import { formerNamesIn } from './former-names.js';
import { junkNameKind, latinSpelling, normalizeCompanyName } from './normalize.js';
import { searchPlanFor } from './query.js';
import type { MatchCandidate, MatchCompany, MatchDecision, SearchEvidence } from './schemas.js';
import { compareNames } from './similarity.js';

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

/** The fallback search reads word beginnings, so it asks for more hits than the first. */
const FALLBACK_LIMIT_FACTOR = 2;

export async function retrieveCandidates(
  company: Pick<MatchCompany, 'name'>,
  search: SearchFn,
  limit: number,
): Promise<Retrieved> {
  const plan = searchPlanFor(company.name);
  const queries: string[] = [];
  const bySlug = new Map<string, MatchCandidate>();
  let complete = false;
  let partial = false;
  if (plan === null) return { candidates: [], queries, evidence: { complete } };
  const names = recordNames(company.name);
  const steps: [string, number][] = [[plan.first, limit]];
  if (plan.fallback !== null) steps.push([plan.fallback, limit * FALLBACK_LIMIT_FACTOR]);
  for (const [q, asked] of steps) {
    queries.push(q);
    const hits = await search(q, asked);
    for (const hit of hits) if (!bySlug.has(hit.slug)) bySlug.set(hit.slug, hit);
    if (hits.some((hit) => names.has(normalizeCompanyName(hit.name)))) {
      complete = hits.length < asked;
      partial = !complete && q === plan.fallback;
      break;
    }
    // A report whose description gives the record's name as its former name is an answer too.
    if (hits.some((hit) => formerNamesIn(hit.description).some((former) => names.has(former)))) break;
  }
  return { candidates: [...bySlug.values()], queries, evidence: { complete, partial } };
}

/** The record's name as compared, and its Latin reading when it is written in Cyrillic or Greek letters. */
function recordNames(name: string | null | undefined): Set<string> {
  const latin = latinSpelling(name);
  return new Set(
    [normalizeCompanyName(name), latin === null ? '' : normalizeCompanyName(latin)].filter((n) => n !== ''),
  );
}

export interface Matched {
  decision: MatchDecision;
  /** What the searches returned, rejected ones included. */
  candidates: MatchCandidate[];
  queries: string[];
}

export interface FindOptions {
  /** Reports a person said this record is not: never proposed again, whichever search finds them. */
  rejected?: ReadonlySet<string>;
}

/** Retrieval and decision together: what the pipeline and the evaluation both run for a record. */
export async function findMatch(
  company: MatchCompany,
  search: SearchFn,
  limit: number,
  options: FindOptions = {},
): Promise<Matched> {
  const { candidates, queries, evidence } = await retrieveCandidates(company, search, limit);
  const rejected = options.rejected ?? new Set<string>();
  const decision = decideMatch(
    company,
    candidates.filter((candidate) => !rejected.has(candidate.slug)),
    evidence,
  );
  const junk = junkNameKind(company.name);
  if (junk !== null && decision.status === 'no_match') {
    return { decision: { status: 'no_match', reason: `the name is ${junk}` }, candidates, queries };
  }
  if (queries.length === 0 && decision.status === 'no_match' && normalizeCompanyName(company.name) !== '') {
    // Letters the service's `q` cannot carry (a name only in another script): no search was possible.
    return {
      decision: { status: 'no_match', reason: 'the name has nothing searchable' },
      candidates,
      queries,
    };
  }
  return { decision, candidates, queries };
}

/**
 * For report.completed: could an unlinked record with this normalised name be the new report, so that its
 * decision may change? Names equal, one the other with words added, or similar as the decision rules read it.
 */
export function reportMayConcern(storedName: string, reportName: string): boolean {
  const target = normalizeCompanyName(reportName);
  if (target === '') return false;
  // A name kept by an earlier version is normalised again: normalising is idempotent, and what a version adds
  // (umlaut spellings, abbreviations) applies to the kept form as well. A name in Cyrillic or Greek letters is
  // compared in its Latin reading too, which is what its search looks for.
  return [...recordNames(storedName)].some((recordName) => {
    if (recordName === target || recordName.startsWith(`${target} `) || target.startsWith(`${recordName} `)) {
      return true;
    }
    return compareNames(recordName, target) !== null;
  });
}
