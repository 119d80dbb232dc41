import { z } from 'zod';
import { patchLeavesBand, sandboxBand } from './bands.js';
import { deepMerge, type JsonObject } from './deep-merge.js';
import { type FixtureReport, fixtureReportSchema, SLUG_PATTERN } from './fixtures.js';
import { SandboxHttpError } from './http-error.js';
import { applyReportUpdate, type ReportUpdate } from './report-updates.js';
import type { SandboxContext } from './sandbox-context.js';
import type { Submission } from './submission-store.js';

/**
 * `/__sandbox/submissions/:id/publish`: what the real service does, out of sight, between a submission and
 * its report. The report is built from what the submission said, then published through the same path as a
 * fixture change, so `report.completed` is signed and delivered like every other event; its data also names
 * the submission.
 */

export interface SubmissionPublication extends ReportUpdate {
  submission: Submission;
}

const publishRequestSchema = z
  .looseObject({ slug: z.string().regex(SLUG_PATTERN).optional() })
  .optional()
  .default({});

const REPORT_URL_BASE = 'https://reports.example.com/r/';

function folded(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/, '');
}

/**
 * The slug of a report published for a submission: its name in Latin letters; for a name with none (株式会社…)
 * the domain's name, else the submission's own id, never one word shared by every such report.
 */
function slugBase(submission: Submission): string {
  const { name, domain } = submission.content;
  const label = domain
    ?.replace(/^https?:\/\//i, '')
    .replace(/^www\./i, '')
    .split(/[./]/)[0];
  return folded(name) || (label ? folded(label) : '') || folded(`report-${submission.id}`);
}

function freeSlug(context: SandboxContext, submission: Submission): string {
  const base = slugBase(submission);
  for (let n = 1; ; n += 1) {
    const candidate = n === 1 ? base : `${base}-${n}`;
    if (!context.store.get(candidate)) return candidate;
  }
}

function reportFor(submission: Submission, slug: string, now: Date): FixtureReport {
  const { content } = submission;
  const geography = [content.city, content.country].filter((part) => part !== undefined).join(', ');
  return {
    slug,
    name: content.name,
    industry: content.industry ?? 'Unspecified',
    stage: 'Seed',
    geography: geography || 'Unspecified',
    description: `${content.name}: report written for submission ${submission.id}.`,
    published: true,
    score: {
      overall: 64.5,
      band: sandboxBand(64.5),
      pillars: [
        { name: 'Team', score: 70, weight: 0.4 },
        { name: 'Market', score: 61, weight: 0.3 },
        { name: 'Product', score: 60.5, weight: 0.3 },
      ],
      strengths: ['Submitted with supporting documents'],
      risks: ['Early-stage evidence'],
      scored_at: now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    },
    verification: null,
    report_url: `${REPORT_URL_BASE}${slug}`,
  };
}

/**
 * Publishes a report for a submission. `body` may pick the slug and patch any report field (as
 * `/__sandbox/reports/:slug` does); a submission is published once (409 after that).
 */
export function publishSubmission(
  context: SandboxContext,
  submissionId: string,
  body: unknown,
  now: Date = new Date(),
): SubmissionPublication {
  const parsed = publishRequestSchema.safeParse(body);
  if (!parsed.success) throw new SandboxHttpError(400, 'invalid_body', z.prettifyError(parsed.error));
  const submission = context.submissions.get(submissionId);
  if (!submission) throw new SandboxHttpError(404, 'not_found', `no submission ${submissionId}`);
  if (submission.status === 'published') {
    throw new SandboxHttpError(
      409,
      'already_published',
      `submission ${submissionId} is already published as ${submission.slug}`,
    );
  }
  const { slug: chosen, ...patch } = parsed.data;
  const slug = chosen ?? freeSlug(context, submission);
  if (context.store.getPublished(slug)) {
    throw new SandboxHttpError(409, 'slug_taken', `a published report ${slug} exists; choose another slug`);
  }
  const whole = fixtureReportSchema.safeParse(
    deepMerge(reportFor(submission, slug, now) as unknown as JsonObject, patch),
  );
  if (!whole.success) throw new SandboxHttpError(400, 'invalid_body', z.prettifyError(whole.error));
  if (patchLeavesBand(patch)) whole.data.score.band = sandboxBand(whole.data.score.overall);
  // Every field is set, so an unpublished fixture of that slug is overwritten, not blended in.
  const update = applyReportUpdate(context.store, context.events, slug, whole.data, {
    submission_id: submissionId,
  });
  return { ...update, submission: context.submissions.markPublished(submissionId, slug) };
}
