import type { JobsOptions } from 'bullmq';
import { z } from 'zod';
import type { CrmChange } from '../crm/connector.js';
import { type BatchJob, batchJobSchema, SYNC_MODES } from './batch-job.js';
import type { QueueName } from './queue-names.js';

/**
 * Every job the pipeline runs: its name, the queues it may run on, and the schema of its payload. Producers
 * enqueue through `Queues.add`, which takes only a name of this table and its payload type; the worker
 * (workers.ts) parses each payload with the schema before its handler (handlers/<job>.ts) sees it.
 *
 * A `score.changed`'s path, by types (docs/architecture.md walks it): webhooks/report-route.ts
 * (ReportWebhookHandler.handle) -> ScoreChangeInbox.accept (the slug marked, with its lane) -> kickScoreChanges
 * -> `score-changes` (ScoreChangesJob) -> score-changes/fan-out.ts drainScoreChanges -> scoreChanged ->
 * enqueueSlugUpdate (PendingSlugs, in the mark's lane) -> `slug-update` (SlugUpdateJob) ->
 * score-changes/slug-update.ts slugUpdate -> enrichNow -> enrichBatch (BatchJob, origin `report-change`) ->
 * CrmConnector.writeCompanies. A `report-event` job of type `score.changed` (queued by older releases) takes
 * scoreChanged too.
 * `report.completed` and `alert.fired` take Pipeline.enqueueReportEvent -> `report-event` (ReportEventJob) ->
 * handlers/report-event.ts reportEvent instead.
 */

/** Report-service event kinds that make the connector do work; every other kind is recorded and acknowledged. */
export const ACTIONABLE_REPORT_EVENTS = ['score.changed', 'report.completed', 'alert.fired'] as const;

/** What the report webhook hands on: verified, deduplicated, of a kind that makes the connector do work. */
export interface VerifiedReportEvent {
  id: string;
  type: (typeof ACTIONABLE_REPORT_EVENTS)[number];
  slug: string;
  /** `report.completed`: `data.submission_id`, when the event names the submission it answers. */
  submissionId?: string;
  /** `alert.fired`: its readable line, its title and message with line breaks, and its time. */
  alert?: { line: string; text?: string; at: string };
}

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

/** A verified, deduplicated report-service event (`score.changed` reaches reportEvent through the inbox). */
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

/** The fan-out of marked score changes (pipeline/score-changes/inbox.ts): the marks are its work, not the payload. */
const scoreChangesJobSchema = z.object({});
export type ScoreChangesJob = z.infer<typeof scoreChangesJobSchema>;

/**
 * Re-read the reports marked for one installation (pipeline/score-changes/pending-slugs.ts) and update every record linked
 * to them. `slug`: a job queued before the marks existed names its one report.
 */
const slugUpdateJobSchema = z.object({
  installationId: z.string(),
  slug: z.string().optional(),
  /** Asked for again and again (a storm): coalesced longer than single changes (updates.ts#enqueueSlugUpdate). */
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

/**
 * The change poll of one installation whose CRM has no webhooks. `reason: 'catch-up'`: asked for by the
 * installation's change stream, which could not say what changed, so it always calls the CRM; absent (the
 * schedule's, and every poll queued before the field existed): skipped while the stream is healthy
 * (handlers/poll.ts).
 */
const pollJobSchema = z.object({ installationId: z.string(), reason: z.enum(['catch-up']).optional() });
export type PollJob = z.infer<typeof pollJobSchema>;

/**
 * The reconcile sweep over every connected installation; with `installationId`, the check of one installation
 * that a sweep skipped (Pipeline.reconcileInstallation).
 */
const reconcileJobSchema = z.object({ installationId: z.string().optional() });
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
  /** When the job was added (ms): for an event's job, when the event arrived. Absent: not known (tests). */
  createdAt?: number;
  /** Saves the payload, so that a later attempt resumes from it. */
  updateData(data: D): Promise<void>;
  /** The queue (lane) it runs on, for a job that runs on more than one. Absent: not known (tests). */
  queue?: string;
}
