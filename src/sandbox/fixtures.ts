import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { defaultFixturesPath } from '../util/project-root.js';

/**
 * The sandbox's own record of a report: every field of the interface's Report, plus `description` (searched
 * by `q`) and `published` (internal: decides 404, never sent). Strict objects, so a typo in a fixture file or a
 * control-route patch is refused instead of silently becoming a new field.
 */

const isoUtc = z.iso.datetime({ offset: false });

export const fixturePillarSchema = z.strictObject({
  name: z.string().min(1),
  score: z.number(),
  weight: z.number().min(0).max(1),
});

export const fixtureScoreSchema = z.strictObject({
  overall: z.number(),
  band: z.string(),
  pillars: z.array(fixturePillarSchema),
  strengths: z.array(z.string()),
  risks: z.array(z.string()),
  scored_at: isoUtc,
});

export const fixtureVerificationSchema = z.strictObject({
  verified_score: z.number(),
  verdict: z.string(),
  signed_at: isoUtc,
});

export const SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

export const fixtureReportSchema = z.strictObject({
  slug: z.string().regex(SLUG_PATTERN),
  name: z.string().min(1),
  industry: z.string().min(1),
  stage: z.string().min(1),
  geography: z.string().min(1),
  description: z.string(),
  published: z.boolean(),
  score: fixtureScoreSchema,
  // Absent and null are both kept as written: the interface does not say which an unverified report has.
  verification: fixtureVerificationSchema.nullish(),
  report_url: z.url(),
});

export const fixtureFileSchema = z.strictObject({
  reports: z.array(fixtureReportSchema).superRefine((reports, ctx) => {
    const seen = new Set<string>();
    for (const [index, report] of reports.entries()) {
      if (seen.has(report.slug)) {
        ctx.addIssue({ code: 'custom', message: `duplicate slug ${report.slug}`, path: [index, 'slug'] });
      }
      seen.add(report.slug);
    }
  }),
});

export type FixturePillar = z.infer<typeof fixturePillarSchema>;
export type FixtureScore = z.infer<typeof fixtureScoreSchema>;
export type FixtureVerification = z.infer<typeof fixtureVerificationSchema>;
export type FixtureReport = z.infer<typeof fixtureReportSchema>;

/** What the read endpoints send: the fixture without its internal `published` flag. */
export type PublicReport = Omit<FixtureReport, 'published'>;

export class FixtureFileError extends Error {
  readonly code = 'FIXTURES_INVALID';
  constructor(
    readonly path: string,
    readonly detail: string,
  ) {
    super(`fixture file ${path} is not valid: ${detail}`);
    this.name = 'FixtureFileError';
  }
}

export function parseFixtureReports(input: unknown, source = '(inline fixtures)'): FixtureReport[] {
  const parsed = fixtureFileSchema.safeParse(Array.isArray(input) ? { reports: input } : input);
  if (!parsed.success) throw new FixtureFileError(source, z.prettifyError(parsed.error));
  return parsed.data.reports;
}

export function loadFixtureReports(path: string = defaultFixturesPath()): FixtureReport[] {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new FixtureFileError(path, err instanceof Error ? err.message : String(err));
  }
  return parseFixtureReports(raw, path);
}

export function toPublicReport(report: FixtureReport): PublicReport {
  const { published: _internal, ...rest } = report;
  return structuredClone(rest);
}
