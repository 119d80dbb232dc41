import type { JobsOptions } from 'bullmq';
import { z } from 'zod';
import type { CompanyRecord, CrmChange } from '../crm/connector.js';
import { FIELD_KEYS } from '../fields.js';
import type { QueueName } from './queue-names.js';

/**
 * Every job the pipeline runs: its name, the queues it may run on, and the schema of its payload. Producers
 * enqueue through `Queues.add`, which takes only a name of this table and its payload type; the worker parses
 * each payload with the schema before the handler (pipeline.ts) sees it. An event's path, by types:
 * webhooks/report-route.ts (VerifiedReportEvent) -> Pipeline.enqueueReportEvent -> `report-event`
 * (ReportEventJob) -> Pipeline.reportEvent -> `slug-update` (SlugUpdateJob) -> Pipeline.slugUpdate ->
 * enrichBatch (BatchJob) -> CrmConnector.writeCompanies.
 */

const SYNC_MODES = ['full', 'incremental', 'reconcile'] as const;

/** Report-service event kinds that make the connector do work; every other kind is recorded and acknowledged. */
export const ACTIONABLE_REPORT_EVENTS = ['score.changed', 'report.completed', 'alert.fired'] as const;

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

const crmChangeSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('created'), recordId: z.string() }),
  z.object({ kind: z.literal('renamed'), recordId: z.string() }),
  z.object({ kind: z.literal('domainChanged'), recordId: z.string() }),
  z.object({
    kind: z.literal('slugChanged'),
    recordId: z.string(),
    slug: z.string().nullable(),
    by: z.string().nullish(),
  }),
  z.object({ kind: z.literal('deleted'), recordId: z.string() }),
  z.object({
    kind: z.literal('merged'),
    recordId: z.string(),
    mergedInto: z.string(),
    mergedIds: z.array(z.string()),
    mergedSlug: z.string().nullish(),
  }),
]) satisfies z.ZodType<CrmChange>;

/** One page of a sync run's listing; the lister saves its progress in its own payload. */
const listJobSchema = z.object({
  installationId: z.string(),
  runId: z.string(),
  mode: z.enum(SYNC_MODES),
  cursor: z.string().nullable(),
  page: z.number(),
  batches: z.number(),
  /** A preview run: its batches match and count, and write nothing (not even the link index). */
  preview: z.boolean().optional(),
  /** At the listing's end, forget indexed records gone from the CRM (unlisted-records.ts). */
  forgetUnlisted: z.boolean().optional(),
});
export type ListJob = z.infer<typeof listJobSchema>;

/** One batch of records, end to end (enrich-batch.ts). */
const batchJobSchema = z.object({
  installationId: z.string(),
  runId: z.string().nullable(),
  batchId: z.string(),
  /**
   * `reconcile` re-reads linked reports only; `incremental` also matches records never matched before;
   * `full` matches every unlinked record again, including those left `no_match` or `needs_review`.
   */
  mode: z.enum(SYNC_MODES),
  recordIds: z.array(z.string()),
  /** The records as listed moments ago; saves a batch read. Absent for event-driven batches. */
  records: z.array(companyRecordSchema).optional(),
  /**
   * The run whose report and search cache this batch reads through when it belongs to no run itself: records
   * of a run's batch tried again later read what the run already read, so no slug is read twice in a run.
   */
  readRunId: z.string().optional(),
  /** Slugs to read afresh even inside a run (a webhook said they changed). */
  freshSlugs: z.array(z.string()).optional(),
  /** Records whose own auto link should be decided again (renamed). */
  rematch: z.array(z.string()).optional(),
  /**
   * A requested report was published and `report.completed` named the record's submission (record id ->
   * slug): linked where matching accepts the report as the record's, else sent to review with it as a
   * candidate (requests/completion.ts).
   */
  links: z.record(z.string(), z.string()).optional(),
  /**
   * Records waiting for a requested report are matched again (a report was published); otherwise they keep
   * `requested` without a search.
   */
  matchRequested: z.boolean().optional(),
  /** Records whose slug a person just set by hand (the change event said so): their link is the person's. */
  personSet: z.array(z.string()).optional(),
  /**
   * Records an admin linked on the review queue (record id -> slug): linked now with source `admin`, in the
   * same write as the report's fields.
   */
  adminLinks: z.record(z.string(), z.string()).optional(),
  /** Records an admin unlinked (or whose run was undone): `no_match`, source `admin`. */
  adminUnlink: z.array(z.string()).optional(),
  /** Records whose person/admin `no_match` is lifted: matched again (a re-match was asked for). */
  release: z.array(z.string()).optional(),
  /** Matches and counts what a write would do, writes nothing: no CRM write, no index change. */
  preview: z.boolean().optional(),
});
export type BatchJob = z.infer<typeof batchJobSchema>;

/** A verified, deduplicated report-service event. */
const reportEventJobSchema = z.object({
  eventId: z.string(),
  type: z.enum(ACTIONABLE_REPORT_EVENTS),
  slug: z.string(),
  /** `report.completed`: the submission the report answers, when the event names one. */
  submissionId: z.string().optional(),
  /** `alert.fired`: the readable line, the title and message with line breaks, and the event's time. */
  alert: z.object({ line: z.string(), text: z.string().optional(), at: z.string() }).optional(),
});
export type ReportEventJob = z.infer<typeof reportEventJobSchema>;

/** The fan-out of marked score changes (storage/score-change-inbox.ts): the marks are its work, not the payload. */
const scoreChangesJobSchema = z.object({});
export type ScoreChangesJob = z.infer<typeof scoreChangesJobSchema>;

/**
 * Re-read the reports marked for one installation (storage/pending-slugs.ts) and update every record linked
 * to them. `slug`: a job queued before the marks existed names its one report.
 */
const slugUpdateJobSchema = z.object({
  installationId: z.string(),
  slug: z.string().optional(),
  /** Asked for again and again (a storm): deferrable, behind single changes (pipeline.ts, enqueueSlugUpdate). */
  hot: z.boolean().optional(),
});
export type SlugUpdateJob = z.infer<typeof slugUpdateJobSchema>;

/** A newly published report, for one installation's unlinked records. */
const reportCompletedJobSchema = z.object({
  installationId: z.string(),
  slug: z.string(),
  /** The record linked directly because the event named its submission: not matched again here. */
  requestedRecordId: z.string().optional(),
});
export type ReportCompletedJob = z.infer<typeof reportCompletedJobSchema>;

/** The activity (a note, a task) for one alert on every record linked to its report. */
const alertActivityJobSchema = z.object({
  installationId: z.string(),
  slug: z.string(),
  eventId: z.string(),
  line: z.string(),
  /** The alert's title and message with line breaks (alert-event.ts, alertText); the line when absent. */
  text: z.string().optional(),
  at: z.string(),
});
export type AlertActivityJob = z.infer<typeof alertActivityJobSchema>;

/** One CRM-side change (from a webhook or a poll). */
const crmChangeJobSchema = z.object({ installationId: z.string(), change: crmChangeSchema });
export type CrmChangeJob = z.infer<typeof crmChangeJobSchema>;

/** The change poll of one installation whose CRM has no webhooks. */
const pollJobSchema = z.object({ installationId: z.string() });
export type PollJob = z.infer<typeof pollJobSchema>;

/** The reconcile sweep over every connected installation. */
const reconcileJobSchema = z.object({});
export type ReconcileJob = z.infer<typeof reconcileJobSchema>;

/** Each job's payload type, by name. */
export interface JobPayloads {
  list: ListJob;
  batch: BatchJob;
  'report-event': ReportEventJob;
  'score-changes': ScoreChangesJob;
  'slug-update': SlugUpdateJob;
  'report-completed': ReportCompletedJob;
  'alert-activity': AlertActivityJob;
  'crm-change': CrmChangeJob;
  poll: PollJob;
  reconcile: ReconcileJob;
}
export type JobName = keyof JobPayloads;
export type JobData<N extends JobName> = JobPayloads[N];

/** The table: job name -> payload schema and the queues it runs on. */
export const JOBS = {
  list: { schema: listJobSchema, queues: ['backfill'] },
  batch: { schema: batchJobSchema, queues: ['backfill', 'realtime'] },
  'report-event': { schema: reportEventJobSchema, queues: ['realtime'] },
  'score-changes': { schema: scoreChangesJobSchema, queues: ['realtime', 'schedule'] },
  'slug-update': { schema: slugUpdateJobSchema, queues: ['realtime', 'backfill'] },
  'report-completed': { schema: reportCompletedJobSchema, queues: ['realtime'] },
  'alert-activity': { schema: alertActivityJobSchema, queues: ['realtime'] },
  'crm-change': { schema: crmChangeJobSchema, queues: ['realtime'] },
  poll: { schema: pollJobSchema, queues: ['schedule'] },
  reconcile: { schema: reconcileJobSchema, queues: ['schedule'] },
} as const satisfies {
  [N in JobName]: { schema: z.ZodType<JobPayloads[N]>; queues: readonly QueueName[] };
};

/** The queues job `N` may be added to. */
export type JobQueue<N extends JobName> = (typeof JOBS)[N]['queues'][number];

export function isJobName(name: string): name is JobName {
  return Object.hasOwn(JOBS, name);
}

/** The payload of a job as stored by BullMQ, parsed; throws a ZodError when it is not of its job's shape. */
export function parseJobData<N extends JobName>(name: N, data: unknown): JobData<N> {
  return payloadSchemas[name].parse(data);
}

// The table's schemas, typed per name so that a generic parse keeps its payload type.
const payloadSchemas: { [N in JobName]: z.ZodType<JobPayloads[N]> } = {
  list: JOBS.list.schema,
  batch: JOBS.batch.schema,
  'report-event': JOBS['report-event'].schema,
  'score-changes': JOBS['score-changes'].schema,
  'slug-update': JOBS['slug-update'].schema,
  'report-completed': JOBS['report-completed'].schema,
  'alert-activity': JOBS['alert-activity'].schema,
  'crm-change': JOBS['crm-change'].schema,
  poll: JOBS.poll.schema,
  reconcile: JOBS.reconcile.schema,
};

/** One job to add in bulk. */
export interface JobToAdd<N extends JobName> {
  data: JobData<N>;
  opts?: JobsOptions;
}

/** What a handler may know about the job running it, besides its payload. */
export interface RunningJob<D> {
  /** BullMQ's job id, unique per job. */
  id: string;
  /** Attempts started so far, this one included. */
  attemptsStarted: number;
  /** Saves the payload, so that a later attempt resumes from it. */
  updateData(data: D): Promise<void>;
}
