import { z } from 'zod';
import type { CompanyRecord } from '../crm/connector.js';
import { FIELD_KEYS, LINK_SOURCES } from '../fields.js';
import { reviewCandidateSchema } from '../storage/review-codec.js';

/**
 * The `batch` job's payload: which records, in which mode, and the batch's origin, the one thing that says
 * what asked for it and so what it may decide for each record (batch/origin.ts reads it). Batches of a run come
 * from the lister; every other origin is an event, an admin's command or a retry of one of those.
 */

export const SYNC_MODES = ['full', 'incremental', 'reconcile'] as const;

const fieldValueSchema = z.union([z.string(), z.number(), z.null()]);

const companyRecordSchema = z.object({
  id: z.string(),
  name: z.string().nullable(),
  domain: z.string().nullable(),
  industry: z.string().nullable(),
  country: z.string().nullable(),
  city: z.string().nullable(),
  fields: z.partialRecord(z.enum(FIELD_KEYS), fieldValueSchema),
}) satisfies z.ZodType<CompanyRecord>;

/**
 * The link a record had before a mass action, put back by its undo: a slug with who made it, a person's or an
 * admin's `no_match`, the review item it waited with, or plain `no_match`.
 */
export const restoredLinkSchema = z.object({
  slug: z.string().nullable(),
  source: z.enum(LINK_SOURCES).nullable(),
  candidates: z.array(reviewCandidateSchema).optional(),
});
export type RestoredLink = z.infer<typeof restoredLinkSchema>;

/** CRM changes that lead to a batch (a deletion only forgets the record). */
const BATCH_CRM_CHANGES = ['created', 'renamed', 'domainChanged', 'slugChanged', 'merged'] as const;

const firstOriginSchema = z.discriminatedUnion('kind', [
  /** A sync run's batch, as listed: it counts in the run (its reads go through the key's report cache). */
  z.object({ kind: z.literal('sync'), runId: z.string() }),
  /** A preview run's batch: matches and counts what a write would do, writes nothing (no CRM write, no index). */
  z.object({ kind: z.literal('preview'), runId: z.string() }),
  /**
   * Records linked to reports that changed (score.changed, alert.fired), updated by a `slug-update` job; `runId`
   * (`ev-<job id>`) names the job; its reads go through the key's report cache like every batch's.
   */
  z.object({ kind: z.literal('report-change'), runId: z.string() }),
  /**
   * An admin's decisions on the review queue: `links` (record id -> slug) become the admin's links in the same
   * write as the report's fields; `rejected` records become the admin's `no_match`; `written` is the slug a
   * single decision wrote to its record just before the batch, in jobs queued before 2026-11-27 (read afresh,
   * like the slugs of `links`); a single decision now goes in `links` too.
   */
  z.object({
    kind: z.literal('review'),
    links: z.record(z.string(), z.string()),
    rejected: z.array(z.string()),
    written: z.string().optional(),
  }),
  /**
   * An admin's "this is not the company" (or an undone run): every record `no_match`, source `admin`. `from`
   * (record id -> slug): the link each record held when the admin was shown it; a record holding another slug
   * (or none) by the time it is written is left as it is, so an unlink never takes a link nobody was shown.
   */
  z.object({ kind: z.literal('unlink'), from: z.record(z.string(), z.string()).optional() }),
  /** A re-match asked for: a person's or an admin's `no_match` is lifted and the records matched again. */
  z.object({ kind: z.literal('rematch') }),
  /** A mass action undone: each record gets back the link it had before (record id -> that link). */
  z.object({ kind: z.literal('restore'), links: z.record(z.string(), restoredLinkSchema) }),
  /**
   * `report.completed` named a waiting record's own submission (record id -> slug): linked where matching
   * accepts the report as the record's, else sent to review with it as a candidate (request-completion.ts).
   */
  z.object({ kind: z.literal('request'), links: z.record(z.string(), z.string()) }),
  /** A report request was just made: the records' fields written from their current state. */
  z.object({ kind: z.literal('refresh') }),
  /** A newly published report may fit these unlinked records: records waiting for a request are matched too. */
  z.object({ kind: z.literal('report-published') }),
  /**
   * A change in the CRM (from a webhook or a poll). `slug`: for `slugChanged`, the slug a person set
   * (the link is theirs); for `merged`, the link carried over to the survivor. Both are read afresh.
   */
  z.object({
    kind: z.literal('crm-change'),
    change: z.enum(BATCH_CRM_CHANGES),
    slug: z.string().optional(),
  }),
]);
export type FirstBatchOrigin = z.infer<typeof firstOriginSchema>;

/**
 * Records of a batch the CRM asked to try again (row locks), as a new event-driven batch: the first batch's
 * origin says what it decides, and a run's retry reads through that run's cache without counting in it.
 */
const retryOriginSchema = z.object({ kind: z.literal('retry'), of: firstOriginSchema });

const batchOriginSchema = z.discriminatedUnion('kind', [...firstOriginSchema.options, retryOriginSchema]);
export type BatchOrigin = z.infer<typeof batchOriginSchema>;

const batchFields = {
  installationId: z.string(),
  batchId: z.string(),
  /**
   * `reconcile` re-reads linked reports only; `incremental` also matches records never matched before;
   * `full` matches every unlinked record again, including those left `no_match` or `needs_review`.
   */
  mode: z.enum(SYNC_MODES),
  recordIds: z.array(z.string()),
  /** The records as listed moments ago; saves a batch read. Absent for event-driven batches. */
  records: z.array(companyRecordSchema).optional(),
};

const currentBatchJobSchema = z.object({ ...batchFields, origin: batchOriginSchema });
export type BatchJob = z.infer<typeof currentBatchJobSchema>;

/**
 * A batch in the flag shape: a run id and one optional flag for each thing a batch can be asked. A deployment
 * upgraded in place may hold such jobs in its queues; each parses into the origin it means.
 */
const flagBatchJobSchema = z.object({
  ...batchFields,
  runId: z.string().nullable(),
  readRunId: z.string().optional(),
  freshSlugs: z.array(z.string()).optional(),
  rematch: z.array(z.string()).optional(),
  links: z.record(z.string(), z.string()).optional(),
  matchRequested: z.boolean().optional(),
  personSet: z.array(z.string()).optional(),
  adminLinks: z.record(z.string(), z.string()).optional(),
  adminUnlink: z.array(z.string()).optional(),
  release: z.array(z.string()).optional(),
  preview: z.boolean().optional(),
});
type FlagBatchJob = z.infer<typeof flagBatchJobSchema>;

/**
 * The origin a flag-shaped batch means. Queued in that shape are a run's batches (`runId`, `preview`); a
 * retry (`runId` null, the first batch's flags, and `readRunId` when the first batch is a run's, which carries
 * no other flag); `request-link` (`links`), `completed-*` (`matchRequested`) and `refresh` (no flag). The
 * flags of batches run in place (admin commands, CRM changes) map the same way.
 */
function originOfFlags(job: FlagBatchJob): BatchOrigin {
  if (job.runId !== null) {
    return job.preview ? { kind: 'preview', runId: job.runId } : { kind: 'sync', runId: job.runId };
  }
  if (job.readRunId !== undefined) return { kind: 'retry', of: { kind: 'sync', runId: job.readRunId } };
  const first = firstOriginOfFlags(job);
  return /-retry\d+$/.test(job.batchId) ? { kind: 'retry', of: first } : first;
}

function firstOriginOfFlags(job: FlagBatchJob): FirstBatchOrigin {
  const fresh = job.freshSlugs?.[0];
  const isReview = job.batchId.startsWith('review');
  if (job.adminLinks || (isReview && (job.adminUnlink || fresh !== undefined))) {
    return {
      kind: 'review',
      links: job.adminLinks ?? {},
      rejected: job.adminUnlink ?? [],
      ...(!job.adminLinks && fresh !== undefined ? { written: fresh } : {}),
    };
  }
  if (job.adminUnlink) return { kind: 'unlink' };
  if (job.release) return { kind: 'rematch' };
  if (job.links) return { kind: 'request', links: job.links };
  if (job.matchRequested) return { kind: 'report-published' };
  if (job.personSet) return { kind: 'crm-change', change: 'slugChanged', ...(fresh ? { slug: fresh } : {}) };
  if (job.rematch) return { kind: 'crm-change', change: 'renamed' };
  if (fresh !== undefined) return { kind: 'crm-change', change: 'merged', slug: fresh };
  return { kind: 'refresh' };
}

function fromFlags(job: FlagBatchJob): BatchJob {
  return {
    installationId: job.installationId,
    batchId: job.batchId,
    mode: job.mode,
    recordIds: job.recordIds,
    ...(job.records ? { records: job.records } : {}),
    origin: originOfFlags(job),
  };
}

/** One batch of records, end to end (enrich-batch.ts); a flag-shaped payload parses into its origin. */
export const batchJobSchema = z.union([currentBatchJobSchema, flagBatchJobSchema.transform(fromFlags)]);
