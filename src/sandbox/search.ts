import { type FixtureReport, type PublicReport, toPublicReport } from './fixtures.js';
import { SandboxHttpError } from './http-error.js';
import type { IndexedReport } from './report-store.js';
import { QUERY_MAX_LENGTH, SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX } from './sandbox-facts.js';
import { foldedWords } from './text-folding.js';

/**
 * Search as the interface describes it. "Letters" is read as any Unicode letter (with the combining marks some
 * scripts need after a letter), "numbers" as any Unicode digit; the length is counted in characters (code
 * points) after NFC normalisation, so a decomposed "é" counts once.
 */

const QUERY_RULE = /^(?:\p{L}\p{M}*|\p{N}| |-)*$/u;

export interface SearchCriteria {
  q?: string;
  industry?: string;
  stage?: string;
  minScore?: number;
  limit: number;
}

export interface SearchOutcome {
  results: PublicReport[];
  /** How many reports matched before `limit` was applied. */
  total: number;
}

export function checkQuery(raw: string): string {
  const q = raw.normalize('NFC');
  if ([...q].length > QUERY_MAX_LENGTH) {
    throw new SandboxHttpError(400, 'invalid_query', `q is longer than ${QUERY_MAX_LENGTH} characters`);
  }
  if (!QUERY_RULE.test(q)) {
    throw new SandboxHttpError(400, 'invalid_query', 'q may hold only letters, numbers, spaces and hyphens');
  }
  return q;
}

export function checkLimit(raw: unknown): number {
  if (raw === undefined) return SEARCH_LIMIT_DEFAULT;
  const text = typeof raw === 'number' ? String(raw) : raw;
  if (typeof text !== 'string' || !/^\d+$/.test(text)) {
    throw new SandboxHttpError(
      400,
      'invalid_limit',
      `limit must be an integer from 1 to ${SEARCH_LIMIT_MAX}`,
    );
  }
  const limit = Number(text);
  if (limit < 1 || limit > SEARCH_LIMIT_MAX) {
    throw new SandboxHttpError(
      400,
      'invalid_limit',
      `limit must be an integer from 1 to ${SEARCH_LIMIT_MAX}`,
    );
  }
  return limit;
}

function single(name: string, raw: unknown): string | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string')
    throw new SandboxHttpError(400, 'invalid_parameter', `${name} must be given once`);
  return raw;
}

/** Reads the REST query string (`q`, `industry`, `stage`, `min_score`, `limit`). */
export function parseSearchParams(query: Record<string, unknown>): SearchCriteria {
  const q = single('q', query.q);
  const minScoreText = single('min_score', query.min_score);
  let minScore: number | undefined;
  if (minScoreText !== undefined) {
    minScore = minScoreText.trim() === '' ? Number.NaN : Number(minScoreText);
    if (!Number.isFinite(minScore))
      throw new SandboxHttpError(400, 'invalid_min_score', 'min_score must be a number');
  }
  const criteria: SearchCriteria = { limit: checkLimit(single('limit', query.limit)) };
  if (q !== undefined) criteria.q = checkQuery(q);
  const industry = single('industry', query.industry);
  if (industry !== undefined) criteria.industry = industry;
  const stage = single('stage', query.stage);
  if (stage !== undefined) criteria.stage = stage;
  if (minScore !== undefined) criteria.minScore = minScore;
  return criteria;
}

function everyWordIsPrefix(queryWords: string[], words: string[]): boolean {
  return queryWords.every((q) => words.some((w) => w.startsWith(q)));
}

/** 0: the name is the query; 1: every query word starts a word of the name; 2: matched elsewhere. */
function rank(entry: IndexedReport, queryWords: string[]): number {
  if (queryWords.length > 0 && entry.nameWords.join(' ') === queryWords.join(' ')) return 0;
  return everyWordIsPrefix(queryWords, entry.nameWords) ? 1 : 2;
}

function byName(a: FixtureReport, b: FixtureReport): number {
  return a.name.localeCompare(b.name, 'en') || a.slug.localeCompare(b.slug, 'en');
}

export function searchReports(
  entries: IndexedReport[],
  criteria: SearchCriteria,
  words: (text: string) => string[] = foldedWords,
): SearchOutcome {
  const queryWords = criteria.q === undefined ? [] : words(criteria.q);
  const matches: { entry: IndexedReport; rank: number }[] = [];
  for (const entry of entries) {
    const { report } = entry;
    if (criteria.industry !== undefined && report.industry !== criteria.industry) continue;
    if (criteria.stage !== undefined && report.stage !== criteria.stage) continue;
    if (criteria.minScore !== undefined && !(report.score.overall >= criteria.minScore)) continue;
    if (!everyWordIsPrefix(queryWords, entry.searchWords)) continue;
    matches.push({ entry, rank: rank(entry, queryWords) });
  }
  matches.sort((a, b) => a.rank - b.rank || byName(a.entry.report, b.entry.report));
  return {
    results: matches.slice(0, criteria.limit).map((m) => toPublicReport(m.entry.report)),
    total: matches.length,
  };
}
