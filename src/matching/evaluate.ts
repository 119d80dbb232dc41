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
  /**
   * Set when the record itself holds doubt (only a domain's country code or an industry points at the
   * report): review listing the expected report counts as right, as the outside sample's `also_acceptable`.
   */
  alsoAcceptable: z.array(z.literal('needs_review')).optional(),
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
  /**
   * Cases with an expected report that ended right (linked to it, or left in a review listing it where the
   * case allows review) / cases with an expected report.
   */
  recall: number;
  /** Reviews listing the expected report in cases that allow review. */
  acceptedReviews: number;
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
    acceptedReviews: 0,
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
    const reviewRight =
      decision.status === 'needs_review' &&
      matchCase.alsoAcceptable?.includes('needs_review') === true &&
      decision.candidates.some((candidate) => candidate.slug === matchCase.expected);
    if (reviewRight) quality.acceptedReviews += 1;
    if (matchCase.expected !== null && !linkedRight && !reviewRight) {
      quality.missed += 1;
      quality.missedIds.push(matchCase.id);
    }
  }
  quality.precision = quality.linked === 0 ? 1 : quality.correctLinks / quality.linked;
  quality.recall =
    quality.expectedLinks === 0
      ? 1
      : (quality.correctLinks + quality.acceptedReviews) / quality.expectedLinks;
  return quality;
}

// ------------------------------------------------------------------------------------- outside sample

/**
 * An outside labelled sample (../shared/match-sample/sample.json): a service catalogue, CRM records and the
 * right outcome for each, made without the matcher. Its names are never copied into the project's own set.
 */
export const sampleReportSchema = z.object({
  slug: z.string().min(1),
  name: z.string(),
  description: z.string(),
  geography: z.string(),
  industry: z.string(),
  stage: z.string(),
  published: z.boolean(),
});
export type SampleReport = z.infer<typeof sampleReportSchema>;

export const sampleRecordSchema = z.object({
  id: z.string().min(1),
  name: z.string().nullable(),
  domain: z.string().nullable(),
  country: z.string().nullable(),
  city: z.string().nullable(),
  /** The CRM's industry, as one CRM's enumeration (`COMPUTER_SOFTWARE`); the first sample has none. */
  industry: z.string().nullish(),
});
export type SampleRecord = z.infer<typeof sampleRecordSchema>;

export const sampleExpectedSchema = z.object({
  status: z.enum(['matched', 'needs_review', 'no_match']),
  slug: z.string().optional(),
  candidates: z.array(z.string()).optional(),
  /** Outcomes as good as `status` because the record itself holds doubt; null entries mean nothing. */
  also_acceptable: z.array(z.string().nullable()).optional(),
  kind: z.string().min(1),
});
export type SampleExpected = z.infer<typeof sampleExpectedSchema>;

export const outsideSampleSchema = z.object({
  seed: z.number().optional(),
  records: z.array(sampleRecordSchema),
  reports: z.array(sampleReportSchema),
  expected: z.record(z.string(), sampleExpectedSchema),
});
export type OutsideSample = z.infer<typeof outsideSampleSchema>;

/** One record's outcome under one search, with the searches it cost. */
export interface SampleOutcome {
  id: string;
  decision: MatchDecision;
  searches: number;
}

export interface SampleKindQuality {
  records: number;
  /** Records whose expected outcome is a link. */
  matchable: number;
  /** Matchable records linked to their report, or left in a review the sample allows (listing it). */
  matchableRight: number;
  /** Records ending as expected (a link to the right report, or a review or no_match it allows). */
  right: number;
  linked: number;
  correctLinks: number;
  wrongLinks: number;
  reviews: number;
  noMatch: number;
  searches: number;
  /** Records expected in review with named candidates, and those whose review lists them all. */
  namesakes: number;
  namesakesComplete: number;
  /** `no_match` for a record whose normalised name a published report has. */
  noMatchBesideSameName: number;
}

export interface SampleQuality {
  all: SampleKindQuality;
  byKind: Map<string, SampleKindQuality>;
  wrongLinkIds: string[];
  /** Records not ending as expected, for a person tuning the matcher. */
  missedIds: string[];
}

function emptySampleKind(): SampleKindQuality {
  return {
    records: 0,
    matchable: 0,
    matchableRight: 0,
    right: 0,
    linked: 0,
    correctLinks: 0,
    wrongLinks: 0,
    reviews: 0,
    noMatch: 0,
    searches: 0,
    namesakes: 0,
    namesakesComplete: 0,
    noMatchBesideSameName: 0,
  };
}

/** Whether a decision is what the sample expects, allowing what `also_acceptable` allows. */
export function sampleOutcomeIsRight(expected: SampleExpected, decision: MatchDecision): boolean {
  const acceptable = new Set<string>([
    expected.status,
    ...(expected.also_acceptable ?? []).flatMap((s) => s ?? []),
  ]);
  if (!acceptable.has(decision.status)) return false;
  if (decision.status === 'matched') return decision.slug === expected.slug;
  if (decision.status === 'needs_review') {
    const listed = new Set(decision.candidates.map((candidate) => candidate.slug));
    const wanted =
      expected.status === 'needs_review' ? (expected.candidates ?? []) : expected.slug ? [expected.slug] : [];
    return wanted.every((slug) => listed.has(slug));
  }
  return true;
}

/**
 * Scores outcomes against the sample. `sameNamePublished` holds the normalised names of the published
 * reports, so a `no_match` beside a same-named report is counted.
 */
export function scoreSample(
  sample: OutsideSample,
  outcomes: readonly SampleOutcome[],
  normalize: (name: string | null) => string,
): SampleQuality {
  const published = new Set(sample.reports.filter((r) => r.published).map((r) => normalize(r.name)));
  const names = new Map(sample.records.map((r) => [r.id, r.name]));
  const all = emptySampleKind();
  const byKind = new Map<string, SampleKindQuality>();
  const wrongLinkIds: string[] = [];
  const missedIds: string[] = [];
  for (const outcome of outcomes) {
    const expected = sample.expected[outcome.id];
    if (expected === undefined) continue;
    const kind = byKind.get(expected.kind) ?? emptySampleKind();
    byKind.set(expected.kind, kind);
    const right = sampleOutcomeIsRight(expected, outcome.decision);
    const { decision } = outcome;
    const name = normalize(names.get(outcome.id) ?? null);
    for (const row of [all, kind]) {
      row.records += 1;
      row.searches += outcome.searches;
      if (expected.status === 'matched') row.matchable += 1;
      if (expected.status === 'matched' && right) row.matchableRight += 1;
      if (right) row.right += 1;
      if (decision.status === 'matched') {
        row.linked += 1;
        if (decision.slug === expected.slug) row.correctLinks += 1;
        else row.wrongLinks += 1;
      } else if (decision.status === 'needs_review') {
        row.reviews += 1;
      } else {
        row.noMatch += 1;
        if (name !== '' && published.has(name)) row.noMatchBesideSameName += 1;
      }
      if (expected.status === 'needs_review' && (expected.candidates ?? []).length > 0) {
        row.namesakes += 1;
        if (right) row.namesakesComplete += 1;
      }
    }
    if (decision.status === 'matched' && decision.slug !== expected.slug) wrongLinkIds.push(outcome.id);
    if (!right) missedIds.push(outcome.id);
  }
  return { all, byKind, wrongLinkIds, missedIds };
}

export function samplePrecision(row: SampleKindQuality): number {
  return row.linked === 0 ? 1 : row.correctLinks / row.linked;
}

/** Right outcomes among the records that have a report: a link to it, or a review the sample allows. */
export function sampleRecall(row: SampleKindQuality): number {
  return row.matchable === 0 ? 1 : row.matchableRight / row.matchable;
}
