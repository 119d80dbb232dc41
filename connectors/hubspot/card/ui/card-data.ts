import { z } from 'zod';

/**
 * What the card shows: one company's report as the connector wrote it on the record (the card reads the
 * record's properties through HubSpot, ui/card-record.ts), and, on the connector's sign-in page, its review
 * candidates and its report request. This folder is copied into
 * the HubSpot project as it is, so it imports nothing from the rest of the repository; the lists below equal
 * src/fields.ts and src/requests/request-store.ts (test/hubspot-card.test.tsx checks that).
 */

export const CARD_MATCH_STATUSES = [
  'matched',
  'needs_review',
  'no_match',
  'not_published',
  'requested',
  'error',
] as const;
export type CardMatchStatus = (typeof CARD_MATCH_STATUSES)[number];

export const CARD_LINK_SOURCES = ['auto', 'person', 'admin', 'request'] as const;
export type CardLinkSource = (typeof CARD_LINK_SOURCES)[number];

export const CARD_REQUEST_STATES = ['pending', 'linked', 'review', 'cancelled'] as const;
export type CardRequestState = (typeof CARD_REQUEST_STATES)[number];

export const cardPillarSchema = z.object({
  name: z.string(),
  score: z.number(),
  /** Share of the overall score, 0..1; null when the record's text did not say. */
  weight: z.number().nullable(),
});
export type CardPillar = z.infer<typeof cardPillarSchema>;

export const cardCandidateSchema = z.object({
  slug: z.string(),
  name: z.string(),
  /** Where the candidate is (the report's geography), as the service words it. */
  place: z.string().nullable(),
  industry: z.string().nullable(),
  score: z.number().nullable(),
  /** Why the matcher proposes it; absent on review items kept before reasons were shown. */
  why: z.string().nullish(),
});
export type CardCandidate = z.infer<typeof cardCandidateSchema>;

export const cardDataSchema = z.object({
  companyId: z.string(),
  /** Null: the connector has not written this record yet. */
  status: z.enum(CARD_MATCH_STATUSES).nullable(),
  report: z
    .object({
      slug: z.string(),
      score: z.number().nullable(),
      band: z.string().nullable(),
      scoredAt: z.string().nullable(),
      pillars: z.array(cardPillarSchema),
      /** Only an http or https address; anything else on the record is left out. */
      url: z.string().nullable(),
    })
    .nullable(),
  verification: z
    .object({ verdict: z.string(), verifiedScore: z.number().nullable(), verifiedAt: z.string().nullable() })
    .nullable(),
  /** The overall score before its last change, and when it changed (the scoring that changed it). */
  previous: z.object({ score: z.number(), changedAt: z.string().nullable() }).nullable(),
  alert: z.object({ text: z.string(), at: z.string().nullable() }).nullable(),
  linkSource: z.enum(CARD_LINK_SOURCES).nullable(),
  review: z
    .object({
      candidates: z.array(cardCandidateSchema),
      /**
       * The connector's word that nothing puts the first candidate ahead of the next (namesakes the record cannot
       * tell apart): none is pre-selected. Absent from a connector that did not say.
       */
      tied: z.boolean().optional(),
    })
    .nullable(),
  request: z.object({ state: z.enum(CARD_REQUEST_STATES), requestedAt: z.string() }).nullable(),
  syncedAt: z.string().nullable(),
});
export type CardData = z.infer<typeof cardDataSchema>;

/** A review decision from the connector's sign-in page: the same two the admin page takes. */
export const cardDecisionSchema = z.discriminatedUnion('action', [
  z.object({ action: z.literal('accept'), slug: z.string().min(1) }),
  z.object({ action: z.literal('reject') }),
]);
export type CardDecision = z.infer<typeof cardDecisionSchema>;

/**
 * The candidate to pre-select. With the connector's word on ties: none when tied, else its first (the matcher's
 * order). Without it: the best-scored one, only when strictly ahead of the next. Tied top candidates (or
 * candidates without scores) leave the choice to the person.
 */
export function preselectedCandidate(candidates: readonly CardCandidate[], tied?: boolean): string | null {
  if (tied === true) return null;
  if (tied === false) return candidates[0]?.slug ?? null;
  const [first, second] = [...candidates].sort((a, b) => (b.score ?? -Infinity) - (a.score ?? -Infinity));
  if (!first || first.score === null) return null;
  if (second && (second.score === null ? false : second.score >= first.score)) return null;
  return first.slug;
}
