import type { CompanyRecord } from '../crm/connector.js';
import type { ReviewCandidate } from './link-index.js';

/**
 * What the pipeline needs from matching, kept as an interface so the batch logic is tested with the real
 * matcher and reads no matching internals.
 */

export interface MatchCandidate {
  slug: string;
  name: string;
  industry?: string | null;
  geography?: string | null;
  stage?: string | null;
  score?: number | null;
}

export type MatchOutcome =
  | { status: 'matched'; slug: string; reason: string }
  | { status: 'needs_review'; candidates: ReviewCandidate[]; reason: string }
  | { status: 'no_match'; reason: string };

export interface MatchingStrategy {
  /**
   * The `q`s to search with, best first; the next is tried only when one finds nothing (the service's
   * free-text rules are not published). Empty when the name has nothing searchable.
   */
  queriesFor(company: CompanyRecord): string[];
  decide(company: CompanyRecord, candidates: MatchCandidate[]): MatchOutcome;
  /** For report.completed: does this (normalised) record name fit the new report's name? */
  normalizeName(name: string): string;
  /** Results to ask the search for. */
  searchLimit: number;
}
