import { z } from 'zod';
import { escapePart, unescapePart } from './part-escape.js';
import { packWhy, readReviewText, readWhy, reviewText } from './review-text.js';

/**
 * A review item as the admin page shows it, and as it is kept: a short string per record (review-queue.ts), its
 * candidates named by a short reference under which each report's details are kept once for every item naming
 * it (`Keys.reviewCandidates`; the reference is chosen by lua/lib/review-items.lua).
 */

export const reviewCandidateSchema = z.object({
  slug: z.string(),
  name: z.string(),
  industry: z.string().nullish(),
  stage: z.string().nullish(),
  geography: z.string().nullish(),
  score: z.number().nullish(),
  why: z.string().optional(),
});
export type ReviewCandidate = z.infer<typeof reviewCandidateSchema>;

export const reviewItemSchema = z.object({
  recordId: z.string(),
  name: z.string().nullable(),
  country: z.string().nullish(),
  industry: z.string().nullish(),
  candidates: z.array(reviewCandidateSchema),
  at: z.string(),
});
export type ReviewItem = z.infer<typeof reviewItemSchema>;

/**
 * A review item, stored as `name|country|industry|at|ref,score,why;ref,score,why...`: each text part escaped
 * (`reviewText`), `at` in base 36 epoch ms when it was an ISO time (else `=` and the text), each reason with its
 * usual phrases as one character each (`packWhy`). The item as written names each candidate by its stored
 * (escaped) slug; the write script puts the candidate's reference in its place (`cand_ref`).
 */
export interface StoredReview {
  name: string | null | undefined;
  country: string | null | undefined;
  industry: string | null | undefined;
  at: string;
  candidates: { ref: string; score: number | null | undefined; why: string | undefined }[];
}

/** `false` stands for a field that was not there (undefined), so that it reads back absent, not null. */
const absent = z.literal(false);
const optionalText = z.union([z.string(), z.null(), absent]);
/**
 * A candidate's report, shared by the items naming it: JSON `[stored slug, name, industry, stage, geography]`.
 * The stored slug comes first: the write script compares it to tell two slugs with one reference apart.
 */
export const storedCandidateSchema = z.tuple([
  z.string(),
  z.string(),
  optionalText,
  optionalText,
  optionalText,
]);
export type StoredCandidate = z.infer<typeof storedCandidateSchema>;

function kept<T>(value: T | undefined): T | false {
  return value === undefined ? false : value;
}

function given<T>(value: T | false): T | undefined {
  return value === false ? undefined : value;
}

/** The item as the write script takes it, and its candidates' details (JSON object stored slug -> details). */
export function storeReview(item: ReviewItem): { item: string; candidates: string } {
  const at = new Date(item.at);
  const stamp =
    !Number.isNaN(at.getTime()) && at.toISOString() === item.at
      ? at.getTime().toString(36)
      : `=${reviewText(item.at)}`;
  const candidates = item.candidates
    .map((c) => {
      const score = c.score === undefined ? '' : c.score === null ? '~' : String(c.score);
      return `${storedCandidateSlug(c.slug)},${score},${packWhy(c.why)}`;
    })
    .join(';');
  const stored = [
    reviewText(item.name),
    reviewText(item.country),
    reviewText(item.industry),
    stamp,
    candidates,
  ];
  const details = Object.fromEntries(
    item.candidates.map((c) => {
      const slug = storedCandidateSlug(c.slug);
      return [
        slug,
        JSON.stringify([
          slug,
          c.name,
          kept(c.industry),
          kept(c.stage),
          kept(c.geography),
        ] satisfies StoredCandidate),
      ];
    }),
  );
  return { item: stored.join('|'), candidates: JSON.stringify(details) };
}

/** A candidate's slug as the item keeps it: `|` and `%` escaped as in the state, `,` and `;` too. */
function storedCandidateSlug(slug: string): string {
  return escapePart(slug).replace(/[,;]/g, (ch) => (ch === ',' ? '%2C' : '%3B'));
}

function plainCandidateSlug(stored: string): string {
  return unescapePart(stored.replace(/%2C/g, ',').replace(/%3B/g, ';'));
}

export function parseReview(value: string): StoredReview | null {
  const parts = value.split('|');
  if (parts.length !== 5) return null;
  const [name = '', country = '', industry = '', stamp = '', candidates = ''] = parts;
  const at = stamp.startsWith('=')
    ? readReviewText(stamp.slice(1))
    : new Date(Number.parseInt(stamp, 36)).toISOString();
  if (typeof at !== 'string') return null;
  return {
    name: readReviewText(name),
    country: readReviewText(country),
    industry: readReviewText(industry),
    at,
    candidates: candidates
      .split(';')
      .filter((c) => c !== '')
      .map((c) => {
        const [ref = '', score = '', why = ''] = c.split(',');
        return {
          ref,
          score: score === '' ? undefined : score === '~' ? null : Number(score),
          why: readWhy(why),
        };
      }),
  };
}

/** A candidate whose details are gone (which a write never leaves) cannot be named, so it is left out. */
export function unpackReview(
  recordId: string,
  stored: StoredReview,
  detailsOf: ReadonlyMap<string, StoredCandidate | null>,
): ReviewItem {
  return stripUndefined({
    recordId,
    name: stored.name ?? null,
    country: stored.country,
    industry: stored.industry,
    candidates: stored.candidates.flatMap(({ ref, score, why }) => {
      const details = detailsOf.get(ref);
      if (!details) return [];
      const [slug, cName, cIndustry, stage, geography] = details;
      return [
        stripUndefined({
          slug: plainCandidateSlug(slug),
          name: cName,
          industry: given(cIndustry),
          stage: given(stage),
          geography: given(geography),
          score,
          why,
        }),
      ];
    }),
    at: stored.at,
  });
}

/** Leaves out the keys whose value is undefined, as the JSON it was read from did. */
function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
