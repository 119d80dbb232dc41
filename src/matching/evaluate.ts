import { z } from 'zod';
import { decideMatch } from './decide.js';
import { searchQueryFor } from './query.js';
import { type MatchDecision, matchCandidateSchema, matchCompanySchema } from './schemas.js';

/** What a labelled case is an example of; the quality table is broken down by it. */
export const MATCH_CASE_KINDS = [
  /** The company has a report and the names are equal once formatting and legal forms are set aside. */
  'true_match',
  /** Reports with the same name exist for different companies (another country, city or industry). */
  'namesake',
  /** The report's name is close to the company's but it is another company. */
  'near_miss',
  /** Different companies whose names share words ("Summit Health" / "Summit Logistics"). */
  'shared_words',
  /** The company's report is there, but the CRM spells the name differently (typo, spacing, word order, initials, transliteration). */
  'variant_spelling',
  /** Several reports share the name and the record has nothing to tell them apart. */
  'ambiguous',
  /** Names in a non-Latin script, alone or beside a Latin one. */
  'non_latin',
  /** Empty, placeholder or punctuation-only names. */
  'odd_name',
  /** The search found nothing. */
  'no_candidates',
] as const;

export const matchCaseSchema = z.object({
  id: z.string().min(1),
  kind: z.enum(MATCH_CASE_KINDS),
  /** What the case shows, for a person reading a failure. */
  note: z.string().optional(),
  company: matchCompanySchema,
  candidates: z.array(matchCandidateSchema),
  /** The slug of the company's own report, or null when none of the candidates is it. */
  expected: z.string().min(1).nullable(),
});
export type MatchCase = z.infer<typeof matchCaseSchema>;
export type MatchCaseKind = MatchCase['kind'];

export interface CaseOutcome {
  id: string;
  kind: MatchCaseKind;
  expected: string | null;
  decision: MatchDecision;
}

export interface KindQuality {
  total: number;
  /** Linked to the expected report. */
  correct: number;
  /** Linked to a report that is not the expected one (or linked when none was expected). */
  wrong: number;
  needsReview: number;
  noMatch: number;
}

export interface MatchQuality {
  /** Correct links / links made; 1 when no link was made (no link was wrong). */
  precision: number;
  /** Correct links / cases with an expected report. */
  recall: number;
  /** Links to anything but the expected report. */
  wrongLinks: number;
  /** Cases with an expected report that did not end linked to it (left for review, no match, or wrong). */
  missed: number;
  /** Cases left for review. */
  needsReview: number;
  total: number;
  linked: number;
  correctLinks: number;
  expectedLinks: number;
  wrongLinkIds: string[];
  missedIds: string[];
  byKind: Partial<Record<MatchCaseKind, KindQuality>>;
}

/**
 * Decides one case the way the pipeline would: a company without a searchable query gets no search, so
 * whatever candidates the case lists are not seen.
 */
export function decideCase(matchCase: MatchCase): CaseOutcome {
  const searched = searchQueryFor(matchCase.company) !== null;
  const decision = decideMatch(matchCase.company, searched ? matchCase.candidates : []);
  return { id: matchCase.id, kind: matchCase.kind, expected: matchCase.expected, decision };
}

export function evaluate(cases: readonly MatchCase[]): MatchQuality {
  const quality: MatchQuality = {
    precision: 1,
    recall: 1,
    wrongLinks: 0,
    missed: 0,
    needsReview: 0,
    total: cases.length,
    linked: 0,
    correctLinks: 0,
    expectedLinks: 0,
    wrongLinkIds: [],
    missedIds: [],
    byKind: {},
  };
  for (const matchCase of cases) {
    const { decision } = decideCase(matchCase);
    const kind = quality.byKind[matchCase.kind] ?? {
      total: 0,
      correct: 0,
      wrong: 0,
      needsReview: 0,
      noMatch: 0,
    };
    quality.byKind[matchCase.kind] = kind;
    kind.total += 1;
    if (matchCase.expected !== null) quality.expectedLinks += 1;
    if (decision.status === 'matched') {
      quality.linked += 1;
      if (decision.slug === matchCase.expected) {
        quality.correctLinks += 1;
        kind.correct += 1;
      } else {
        quality.wrongLinks += 1;
        quality.wrongLinkIds.push(matchCase.id);
        kind.wrong += 1;
      }
    } else if (decision.status === 'needs_review') {
      quality.needsReview += 1;
      kind.needsReview += 1;
    } else {
      kind.noMatch += 1;
    }
    const linkedRight = decision.status === 'matched' && decision.slug === matchCase.expected;
    if (matchCase.expected !== null && !linkedRight) {
      quality.missed += 1;
      quality.missedIds.push(matchCase.id);
    }
  }
  quality.precision = quality.linked === 0 ? 1 : quality.correctLinks / quality.linked;
  quality.recall = quality.expectedLinks === 0 ? 1 : quality.correctLinks / quality.expectedLinks;
  return quality;
}
