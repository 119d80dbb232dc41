import { z } from 'zod';
import { installationSchema } from '../installations/store.js';
import { reportSlugSchema } from '../reports/slug.js';

/** Every input the admin page and its API accept, as zod schemas; the routes parse nothing by hand. */

export const installationIdSchema = installationSchema.shape.id;

/** Any CRM's record id: digits, or letters and digits (15 or 18 of them on some CRMs). */
export const recordIdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_-]+$/, 'expects a CRM record id');

/** A slug typed by the admin: trimmed, then held to the one definition in reports/slug.ts. */
export const slugSchema = z
  .string({ error: 'expects a report slug' })
  .trim()
  .min(1, 'enter a report slug')
  .pipe(reportSlugSchema);

export const reviewDecisionSchema = z.discriminatedUnion(
  'action',
  [
    z.object({ action: z.literal('accept'), slug: slugSchema }),
    z.object({ action: z.literal('set'), slug: slugSchema }),
    z.object({ action: z.literal('reject') }),
  ],
  { error: "action must be 'accept' (with slug), 'set' (with slug) or 'reject'" },
);
export type ReviewDecision = z.infer<typeof reviewDecisionSchema>;

/** Most records one bulk review request may decide: a few batches' worth, answered in seconds. */
export const BULK_REVIEW_MAX = 1_000;

export const BULK_REVIEW_ACTIONS = ['accept-first', 'reject'] as const;

/** A mass action's confirmation: the digest of the set its preview showed (admin/mass-actions.ts). */
export const confirmSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{32}$/, 'expects the confirmation given with the preview (?dryRun=1)');

/** The body of a mass action other than a bulk review decision: an optional confirmation. */
export const massBodySchema = z.object({ confirm: confirmSchema.optional() });

/** `?dryRun=1` (or `true`): answer what a mass action would do, change nothing. */
export const dryRunQuerySchema = z.object({
  dryRun: z
    .enum(['1', 'true', '0', 'false'], { error: 'dryRun must be 1 or 0' })
    .optional()
    .transform((v) => v === '1' || v === 'true'),
});

export const massIdSchema = z.string().regex(/^[a-z0-9]{1,40}$/, 'expects a mass action id');

/**
 * Review at scale: accept each record's first candidate, or reject every candidate of each record. The page's
 * form sends one `recordIds` field per checked box, which arrives as a string when only one is checked.
 */
export const bulkReviewSchema = z.object({
  action: z.enum(BULK_REVIEW_ACTIONS, { error: "action must be 'accept-first' or 'reject'" }),
  recordIds: z.preprocess(
    // No box checked sends no field at all: that is an empty selection, not a malformed one.
    (v) => (typeof v === 'string' ? [v] : (v ?? [])),
    z
      .array(recordIdSchema, { error: 'recordIds expects a list of record ids' })
      .min(1, 'select at least one record')
      .max(BULK_REVIEW_MAX, `at most ${BULK_REVIEW_MAX} records at once`),
  ),
  /** When given, the decision is made only for the set that confirmation was shown for. */
  confirm: confirmSchema.optional(),
});
export type BulkReviewDecision = z.infer<typeof bulkReviewSchema>;

/** How many of the latest decisions the API returns (the CSV has every one kept). */
export const decisionsQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(1_000).default(100),
});

export const reportKeyBodySchema = z.object({
  apiKey: z
    .string({ error: 'expects apiKey, the report-service API key' })
    .trim()
    .min(1, 'enter an API key')
    .max(500, 'an API key has at most 500 characters')
    .regex(/^[\x21-\x7e]+$/, 'an API key has no spaces or special characters'),
});

export const syncBodySchema = z.object({
  full: z.boolean({ error: 'full must be true or false' }).optional(),
});

export const alertActivityBodySchema = z.object({
  on: z.boolean({ error: 'on must be true or false' }),
});

export const fixtureWritesBodySchema = z.object({
  allow: z.boolean({ error: 'allow must be true or false' }),
});

export const eventsQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(50),
});

/** Review items a page may show (`?per=`): more per page, more to select at once. */
export const REVIEW_PAGE_SIZES = [10, 50, 100] as const;

export const reviewPageQuerySchema = z.object({
  page: z.coerce.number().int().min(1).max(10_000).catch(1).default(1),
  per: z.coerce
    .number()
    .refine((n) => (REVIEW_PAGE_SIZES as readonly number[]).includes(n))
    .catch(REVIEW_PAGE_SIZES[0])
    .default(REVIEW_PAGE_SIZES[0]),
});

export const loginFormSchema = z.object({
  token: z.string().max(1_000).default(''),
  next: z.string().max(2_000).optional(),
});

/** Where to go after logging in: only a path of the admin page itself, never another site. */
export function safeNextPath(next: string | undefined): string {
  if (!next) return '/admin';
  return /^\/admin(?:[/?#]|$)/.test(next) && !next.includes('//') && !next.includes('\\') ? next : '/admin';
}
