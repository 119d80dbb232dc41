import { z } from 'zod';
import { reportSlugSchema } from './slug.js';

/**
 * The report-service resources, exact where the published interface is exact and tolerant of its gaps:
 * `verification` may be an object, null or absent; `band` and `verdict` are any string; no score range is
 * assumed; unknown fields are kept (loose objects) so nothing the service adds later is lost.
 */

const isoTimestamp = z.iso.datetime({ offset: true, local: false });

export const pillarSchema = z.looseObject({
  name: z.string(),
  score: z.number(),
  weight: z.number(),
});

export const scoreSchema = z.looseObject({
  overall: z.number(),
  band: z.string(),
  pillars: z.array(pillarSchema),
  // Element shape is not published.
  strengths: z.array(z.unknown()).optional(),
  risks: z.array(z.unknown()).optional(),
  scored_at: isoTimestamp,
});

export const verificationSchema = z.looseObject({
  verified_score: z.number(),
  verdict: z.string(),
  signed_at: isoTimestamp,
});

export const reportSchema = z.looseObject({
  slug: z.string().min(1),
  name: z.string(),
  industry: z.string(),
  stage: z.string(),
  geography: z.string(),
  score: scoreSchema,
  verification: verificationSchema.nullish(),
  report_url: z.url(),
});

export type Pillar = z.infer<typeof pillarSchema>;
export type Score = z.infer<typeof scoreSchema>;
export type Verification = z.infer<typeof verificationSchema>;
export type Report = z.infer<typeof reportSchema>;

/**
 * A search result. The REST search body is not published and GraphQL items promise only `slug` and `score`,
 * so everything but the slug is optional; matching reads the full report when it needs a missing field.
 */
export const searchHitSchema = z.looseObject({
  // A hit whose slug could not be read safely is skipped, never followed.
  slug: reportSlugSchema,
  name: z.string().optional(),
  industry: z.string().nullish(),
  stage: z.string().nullish(),
  geography: z.string().nullish(),
  score: z
    .union([z.number(), z.looseObject({ overall: z.number().optional(), band: z.string().optional() })])
    .nullish(),
  // Not promised by the interface; the search reads it, and a hit carrying it can show a former name.
  description: z.string().nullish().catch(null),
});
export type SearchHit = z.infer<typeof searchHitSchema>;

export interface SearchParams {
  q?: string;
  industry?: string;
  stage?: string;
  min_score?: number;
  /** 1 to 50; the service's default is 20. */
  limit?: number;
}

export interface SearchResult {
  hits: SearchHit[];
  /** Which shape the body had, for diagnostics: `array`, `results`, `items`, ... */
  shape: string;
  /** Items left out because they had no usable slug, with the reason for each. */
  skipped: string[];
}
