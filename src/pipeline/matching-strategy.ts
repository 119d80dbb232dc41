import type { CompanyRecord } from '../crm/connector.js';
import type { ReviewCandidate } from '../storage/review-codec.js';

/**
 * What the pipeline needs from matching, kept as an interface so the batch logic is tested with the real
 * matcher and reads no matching internals. Every matching rule (which queries, when to stop searching, what
 * links) lives behind it, in src/matching/.
 */

export interface MatchCandidate {
  slug: string;
  name: string;
  industry?: string | null;
  geography?: string | null;
  stage?: string | null;
  score?: number | null;
  /** The report's description, when the search hit carries one. */
  description?: string | null;
}

export type MatchOutcome =
  | { status: 'matched'; slug: string; reason: string }
  | { status: 'needs_review'; candidates: ReviewCandidate[]; reason: string }
  | { status: 'no_match'; reason: string };

/** One search of the report service, its hits completed with names; the strategy decides what to search. */
export type CandidateSearch = (q: string, limit: number) => Promise<MatchCandidate[]>;

export interface FoundMatch {
  outcome: MatchOutcome;
  /** The queries the strategy sent, in order: the record's search cost. */
  queries: string[];
}

export interface MatchingStrategy {
  /** Searches for a record's report and decides its link; `rejected` slugs are never proposed again. */
  find(company: CompanyRecord, search: CandidateSearch, rejected: ReadonlySet<string>): Promise<FoundMatch>;
  /** The form an unlinked record's name is kept in, for `mayConcern`. */
  normalizeName(name: string): string;
  /**
   * For report.completed naming the record's own submission: `matched` when matching accepts the published
   * report as the record's, else `needs_review` with it as a candidate (never `no_match`).
   */
  judgeRequested(company: CompanyRecord, report: MatchCandidate): MatchOutcome;
  /** For report.completed: could a record with this normalised name be the new report? */
  mayConcern(normalizedName: string, reportName: string): boolean;
  /** Results to ask each search for. */
  searchLimit: number;
}
