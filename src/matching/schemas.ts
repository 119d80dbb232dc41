import { z } from 'zod';

/** What the matcher knows about a CRM company (the matching fields of `CompanyRecord`). */
export const matchCompanySchema = z.object({
  name: z.string().nullish(),
  domain: z.string().nullish(),
  industry: z.string().nullish(),
  country: z.string().nullish(),
  city: z.string().nullish(),
});
export type MatchCompany = z.infer<typeof matchCompanySchema>;

/**
 * A report a search returned. `name` is required: a search hit without one (GraphQL promises only `slug`
 * and `score`) must be completed from the report before it can be compared.
 */
export const matchCandidateSchema = z.object({
  slug: z.string().min(1),
  name: z.string(),
  industry: z.string().nullish(),
  geography: z.string().nullish(),
  stage: z.string().nullish(),
  /**
   * The report's description, when the search hit carries one (the interface does not promise it; the search
   * reads it). A former name is found there.
   */
  description: z.string().nullish(),
});
export type MatchCandidate = z.infer<typeof matchCandidateSchema>;

/** A candidate kept for the admin page, with why it is plausible in words. */
export const reviewCandidateSchema = z.object({
  slug: z.string().min(1),
  name: z.string(),
  industry: z.string().nullable(),
  geography: z.string().nullable(),
  why: z.string().min(1),
});
export type ReviewCandidate = z.infer<typeof reviewCandidateSchema>;

export const matchDecisionSchema = z.discriminatedUnion('status', [
  z.object({ status: z.literal('matched'), slug: z.string().min(1), reason: z.string().min(1) }),
  z.object({
    status: z.literal('needs_review'),
    candidates: z.array(reviewCandidateSchema).min(1),
    reason: z.string().min(1),
  }),
  z.object({ status: z.literal('no_match'), reason: z.string().min(1) }),
]);
export type MatchDecision = z.infer<typeof matchDecisionSchema>;
export type MatchStatus = MatchDecision['status'];

/** What a retrieval learnt about the search itself, beyond the candidates it found. */
export interface SearchEvidence {
  /**
   * The search that found the same-name reports returned fewer hits than asked for, so nothing it would
   * have listed is missing.
   */
  complete: boolean;
  /**
   * The same-name reports were found only by the fallback search of word beginnings, and it came back full:
   * another report of the same name may be among what it left out, so nothing is linked on it.
   */
  partial?: boolean;
}
