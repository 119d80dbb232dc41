import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { alertActivity } from '../alerts/alert-activity.js';
import type { AlertStore } from '../alerts/alert-store.js';
import type { ChangedRecord, CrmChange, CrmConnector } from '../crm/connector.js';
import type { DecisionLog } from '../decisions/decision-log.js';
import type { InstallationStore } from '../installations/store.js';
import type { Metrics } from '../metrics.js';
import type { RedisClient } from '../redis.js';
import type { RequestStore } from '../requests/request-store.js';
import { RETRY_BUDGET } from '../retry-budget.js';
import type { Keys } from '../storage/keys.js';
import type { LinkIndex } from '../storage/link-index.js';
import { MergeForwarding } from '../storage/merge-forwarding.js';
import { PendingSlugs } from '../storage/pending-slugs.js';
import { digestFingerprint, fingerprintOf, sameFingerprint } from '../storage/record-state.js';
import { RunLinks } from '../storage/run-links.js';
import type { RunKind, SyncRuns } from '../storage/runs.js';
import { HOT_EVENTS, type MarkedSlug, type ScoreChangeInbox } from '../storage/score-change-inbox.js';
import { markSlugChanged } from '../storage/slug-changes.js';
import type { EventLogEntry } from '../webhooks/event-log.js';
import type { VerifiedReportEvent } from '../webhooks/report-route.js';
import { type BatchOutcome, type BatchTargets, enrichBatch } from './enrich-batch.js';
import type {
  AlertActivityJob,
  BatchJob,
  CrmChangeJob,
  ListJob,
  PollJob,
  ReportCompletedJob,
  ReportEventJob,
  RunningJob,
  SlugUpdateJob,
} from './jobs.js';
import type { MatchingStrategy } from './matching-strategy.js';
import { jobIdPart, legacyJobIdPart, type Queues } from './queues.js';
import { type InstallationRuntime, isPolled } from './runtime.js';
import { judgeSlugChange } from './slug-change-check.js';
import { UnlistedRecords } from './unlisted-records.js';

/**
 * The enrichment pipeline: what each job does. Workers (workers.ts) decide what a failure means for the job;
 * here every step is written to be safe to run again.
 */

/** Batches of one run allowed in the queue at once, so installations take turns on a shared queue. */
export const MAX_OUTSTANDING_BATCHES = 8;
/** Events for one slug inside this window become one read and one write per record. */
export const COALESCE_MS = 300;
const DRAIN_TAKE = 100;
/**
 * A hot slug's updates coalesce over this long: a storm on K reports then costs at most K reads (and CRM
 * reads) per HOT_COALESCE_MS, which leaves most of the report key's and the CRM's budget to single changes.
 * Its records still end with the storm's last score.
 */
export const HOT_COALESCE_MS = 20_000;
const STORM_DRAIN_PAUSE_MS = 1_000;
export const SCORE_CHANGES_SWEEP_MS = 30_000;
const DRAIN_ROUNDS = 50;
/** Slugs one update job takes; more are left to the next job, queued at its end. */
const SLUGS_PER_UPDATE = 500;

export interface PipelineDeps {
  redis: RedisClient;
  keys: Keys;
  index: LinkIndex;
  runs: SyncRuns;
  queues: Queues;
  installations: InstallationStore;
  runtime: InstallationRuntime;
  matching: MatchingStrategy;
  /** Report requests waiting for their report (requests/request-store.ts). */
  requests: RequestStore;
  /** The latest alert of each report (alerts/alert-store.ts). */
  alerts: AlertStore;
  /** Who decided what about a link (decisions/decision-log.ts): here, a person's own change in the CRM. */
  decisions: DecisionLog;
  /** Acknowledged score changes waiting for their fan-out. */
  inbox: ScoreChangeInbox;
  logger: Logger;
  metrics?: Metrics;
}

/** Returned by a step that wants to run again later without counting as a failed attempt. */
export class Reschedule<D = unknown> {
  constructor(
    readonly delayMs: number,
    /** The payload the job resumes with. */
    readonly data?: D,
  ) {}
}

export class Pipeline {
  /** Reports whose records wait for an update, per installation (what `slug-update` jobs take). */
  readonly pendingSlugs: PendingSlugs;
  private readonly unlisted: UnlistedRecords;
  private readonly mergedInto: MergeForwarding;

  constructor(readonly deps: PipelineDeps) {
    this.pendingSlugs = new PendingSlugs(deps.redis, deps.keys);
    this.unlisted = new UnlistedRecords(deps.redis, deps.keys);
    this.mergedInto = new MergeForwarding(deps.redis, deps.keys);
  }

  // ---- enqueueing -------------------------------------------------------------------------------------

  /**
   * Starts a sync run; returns its id. A full run also matches unlinked records; a preview matches as a full
   * run does and writes nothing.
   */
  async startSync(
    installationId: string,
    kind: RunKind,
    options: { forgetUnlisted?: boolean } = {},
  ): Promise<string> {
    const runId = await this.deps.runs.start(installationId, kind);
    const data: ListJob = {
      installationId,
      runId,
      mode: kind === 'initial' || kind === 'preview' ? 'full' : kind,
      cursor: null,
      page: 0,
      batches: 0,
      ...(kind === 'preview' ? { preview: true } : {}),
      ...(options.forgetUnlisted ? { forgetUnlisted: true } : {}),
    };
    await this.deps.queues.add('backfill', 'list', data, { jobId: `list-${jobIdPart(runId)}` });
    return runId;
  }

  /**
   * A verified report-service event, already deduplicated by the webhook route. score.changed events on one slug
   * share a pending job (the job re-reads the report, so the latest event wins): a storm of N events on K
   * slugs queues about K jobs, and a later event is not queued behind the storm. keepLastIfActive keeps one
   * more job when an event arrives while that slug's job runs, so no change after a read is lost. Other kinds carry their own
   * payload (submission, alert line) and keep one job per event.
   */
  async enqueueReportEvent(event: VerifiedReportEvent): Promise<void> {
    await this.deps.queues.add(
      'realtime',
      'report-event',
      {
        eventId: event.id,
        type: event.type,
        slug: event.slug,
        ...(event.submissionId ? { submissionId: event.submissionId } : {}),
        ...(event.alert ? { alert: event.alert } : {}),
      },
      event.type === 'score.changed'
        ? { deduplication: { id: `evt-sc-${jobIdPart(event.slug)}`, keepLastIfActive: true } }
        : { jobId: `evt-${jobIdPart(event.id)}` },
    );
  }

  /**
   * A verified `score.changed`: recorded and its slug marked in one round trip (see ScoreChangeInbox), then a
   * fan-out queued when none is. The mark is durable once `accept` returns, so a failure to queue the fan-out
   * only delays it until the next event or the periodic sweep.
   */
  async acceptScoreChange(entry: EventLogEntry & { slug: string }): Promise<'duplicate' | 'accepted'> {
    const outcome = await this.deps.inbox.accept(entry);
    if (outcome === 'marked_kick') {
      await this.kickScoreChanges().catch((err: unknown) => {
        this.deps.logger.warn({ err }, 'score-change fan-out not queued; the periodic sweep will run it');
      });
    }
    return outcome === 'duplicate' ? 'duplicate' : 'accepted';
  }

  /**
   * A new fan-out job. Not deduplicated: the inbox's kick mark already makes this rare (once per idle-to-busy
   * change, and once per DRAIN_ROUNDS), and a fan-out that is just finishing must never swallow the next one.
   * Two fan-outs at once are harmless: each take is atomic.
   */
  private async kickScoreChanges(): Promise<void> {
    await this.deps.queues.add('realtime', 'score-changes', {});
  }

  /**
   * The fan-out of marked score changes: a killed fan-out's leftovers first, then the marks oldest first, each
   * through `reportEvent` (one coalesced `slug-update` per installation linked to the slug). After
   * DRAIN_ROUNDS takes it hands over to a new job, so a continuous storm never keeps one job running forever.
   */
  async drainScoreChanges(): Promise<void> {
    // A take's marks are fanned out together: one after another, each waited its turn behind every request
    // the storm had queued on this event loop.
    const fanOut = (marks: MarkedSlug[]) =>
      Promise.all(
        marks.map(async (mark) => {
          await this.reportEvent({ eventId: mark.eventId, type: 'score.changed', slug: mark.slug });
          await this.deps.inbox.done(mark);
        }),
      );
    await fanOut(await this.deps.inbox.leftovers());
    for (let round = 0; round < DRAIN_ROUNDS; round++) {
      const marks = await this.deps.inbox.take(DRAIN_TAKE);
      if (marks.length === 0) return;
      await fanOut(marks);
      // What arrives meanwhile coalesces into one mark per slug: a storm is fanned out a few times a second,
      // not once per event, and once a second when it was all the take held (its updates wait
      // HOT_COALESCE_MS anyway), which leaves the event loop to the acknowledgements.
      const onlyStorm = marks.every((m) => m.events >= HOT_EVENTS);
      await sleep(onlyStorm ? STORM_DRAIN_PAUSE_MS : COALESCE_MS);
    }
    await this.kickScoreChanges();
  }

  async enqueueCrmChanges(installationId: string, changes: CrmChange[]): Promise<void> {
    if (changes.length === 0) return;
    await this.deps.queues.addBulk(
      'realtime',
      'crm-change',
      changes.map((change) => ({
        data: { installationId, change },
        opts: {
          delay: COALESCE_MS,
          // One pending job per record: a burst of edits becomes one re-read of the record.
          deduplication: {
            id: `chg-${jobIdPart(installationId)}-${jobIdPart(change.recordId)}-${change.kind}`,
            keepLastIfActive: true,
          },
        },
      })),
    );
  }

  /** One batch, then another update of each slug whose report changed while the batch had it in hand. */
  private async enrich(targets: BatchTargets, job: BatchJob): Promise<BatchOutcome> {
    const outcome = await enrichBatch(this.deps, targets, job);
    for (const slug of outcome.staleSlugs) await this.enqueueSlugUpdate(job.installationId, slug);
    return outcome;
  }

  /**
   * Marks a slug's linked records for an update and makes sure the installation's update job is queued. The
   * job takes every slug marked by then and writes their records together, in full CRM batches: a burst of
   * changes on many reports costs about one write per batch of records (`limits.writeBatchSize`), not one per
   * report. A slug asked for again and again (a storm of re-scores) is hot: it waits in its own lane, whose job
   * runs on the backfill queue's workers behind the backfill's own batches and reads in the report key's
   * deferrable lane, so a storm never takes the realtime workers or the key's burst from a single change.
   */
  private async enqueueSlugUpdate(installationId: string, slug: string): Promise<void> {
    const hot = await this.deps.inbox.isHot(slug);
    await this.pendingSlugs.mark(installationId, slug, hot ? 'hot' : 'urgent');
    await this.queueSlugUpdate(installationId, hot);
  }

  private async queueSlugUpdate(installationId: string, hot: boolean): Promise<void> {
    await this.deps.queues.add(
      hot ? 'backfill' : 'realtime',
      'slug-update',
      { installationId, ...(hot ? { hot: true } : {}) },
      {
        delay: hot ? HOT_COALESCE_MS : COALESCE_MS,
        ...(hot ? { priority: 1 } : {}),
        // One pending job per installation and lane; one more when it is already running, for marks made
        // after it took its own.
        deduplication: {
          id: `slugs-${jobIdPart(installationId)}-${hot ? 'hot' : 'urgent'}`,
          keepLastIfActive: true,
        },
      },
    );
  }

  private async enqueueBatch(
    queue: 'backfill' | 'realtime',
    job: BatchJob,
    opts: { jobId?: string; delay?: number } = {},
  ): Promise<void> {
    await this.deps.queues.add(queue, 'batch', job, opts);
  }

  // ---- steps ------------------------------------------------------------------------------------------

  /** Lists one page at a time and turns it into batch jobs, keeping a bounded number outstanding. */
  async list(start: ListJob, job: RunningJob<ListJob>): Promise<Reschedule<ListJob> | undefined> {
    let data = start;
    const { connector } = await this.deps.runtime.open(data.installationId, {
      preview: data.preview === true,
    });
    for (;;) {
      const outstanding = data.batches - (await this.deps.runs.batchesDone(data.runId));
      if (outstanding >= MAX_OUTSTANDING_BATCHES) return new Reschedule(250, data);
      const page = await connector.listCompanies(data.cursor);
      // A CRM with a bulk API gets batches big enough to use it (one write per batch either way).
      const batches = chunk(
        page.records,
        Math.max(connector.limits.writeBatchSize, connector.bulkThreshold ?? 0),
      );
      for (const [i, records] of batches.entries()) {
        const batchId = `${data.page}-${i}`;
        await this.enqueueBatch(
          'backfill',
          {
            installationId: data.installationId,
            runId: data.runId,
            batchId,
            mode: data.mode,
            recordIds: records.map((r) => r.id),
            records,
            ...(data.preview ? { preview: true } : {}),
          },
          { jobId: `batch-${jobIdPart(data.runId)}-${batchId}` },
        );
      }
      await this.deps.runs.addListed(data.runId, data.page, page.records.length);
      if (data.forgetUnlisted)
        await this.unlisted.addListed(
          data.installationId,
          data.runId,
          page.records.map((r) => r.id),
        );
      data = {
        ...data,
        cursor: page.nextCursor,
        page: data.page + 1,
        batches: data.batches + batches.length,
      };
      // Saved before the next page: a killed lister resumes here, and re-enqueued batch ids are deduplicated.
      await job.updateData(data);
      if (page.nextCursor === null) {
        if (data.forgetUnlisted)
          await this.unlisted.forgetUnlisted(this.deps.index, connector, data.installationId, data.runId);
        await this.deps.runs.listingDone(data.runId, data.batches);
        return undefined;
      }
    }
  }

  async batch(start: BatchJob, job?: RunningJob<BatchJob>): Promise<void> {
    // A batch run again (a failure, a rate-limit delay, a killed worker) may have written some records
    // already: the listing's copy would make them look changed and write them again, so the records are read
    // from the CRM instead.
    const data: BatchJob = job && job.attemptsStarted > 1 ? { ...start, records: undefined } : start;
    // Batches without a run come from events (retries of webhook work, report.completed): urgent.
    const { connector, client } = await this.deps.runtime.open(data.installationId, {
      urgent: data.runId === null,
      preview: data.preview === true,
    });
    const { result, retryRecordIds } = await this.enrich({ connector, client }, data);
    if (data.runId) await this.deps.runs.recordBatch(data.runId, data.batchId, result);
    if (retryRecordIds.length > 0) {
      const readScope = data.runId ?? data.readRunId ?? null;
      const attempt = Number(/-retry(\d+)$/.exec(data.batchId)?.[1] ?? 0) + 1;
      if (attempt <= RETRY_BUDGET.recordRetry.attempts) {
        await this.enqueueBatch(
          'realtime',
          {
            ...data,
            runId: null,
            // The reports this batch read stay in its run's cache: the retry reads them there, fresh ones too.
            ...(readScope ? { readRunId: readScope } : {}),
            freshSlugs: readScope ? undefined : data.freshSlugs,
            batchId: `${data.batchId.replace(/-retry\d+$/, '')}-retry${attempt}`,
            recordIds: retryRecordIds,
            records: undefined,
          },
          { delay: RETRY_BUDGET.recordRetry.baseDelayMs * 2 ** attempt },
        );
      }
    }
  }

  /** A report-service event: fan out to every installation that has the slug. */
  async reportEvent(data: ReportEventJob): Promise<void> {
    if (data.type === 'score.changed') {
      // Before the fan-out: a batch that read this report earlier and links a record after the fan-out
      // looked at the index sees the mark and asks for this update again (see BatchOutcome.staleSlugs).
      await markSlugChanged(this.deps.redis, this.deps.keys, data.slug);
      for (const installationId of await this.deps.index.slugs.installationsForSlug(data.slug)) {
        await this.enqueueSlugUpdate(installationId, data.slug);
      }
    } else if (data.type === 'alert.fired') {
      await this.alertFired(data);
    } else if (data.type === 'report.completed') {
      const waiting = data.submissionId ? await this.deps.requests.bySubmission(data.submissionId) : null;
      const direct = waiting?.state === 'pending' ? waiting : null;
      if (direct) {
        // The event names the record's own submission: linked where matching accepts the report, else sent to
        // review with it (requests/completion.ts).
        await this.enqueueBatch(
          'realtime',
          {
            installationId: direct.installationId,
            runId: null,
            batchId: 'request-link',
            mode: 'full',
            recordIds: [direct.recordId],
            links: { [direct.recordId]: data.slug },
            freshSlugs: [data.slug],
          },
          { jobId: `reqlink-${jobIdPart(data.eventId)}` },
        );
      }
      for (const installation of await this.deps.installations.list()) {
        if (installation.status !== 'connected') continue;
        await this.deps.queues.add(
          'realtime',
          'report-completed',
          {
            installationId: installation.id,
            slug: data.slug,
            ...(direct?.installationId === installation.id ? { requestedRecordId: direct.recordId } : {}),
          },
          { deduplication: { id: `done-${jobIdPart(installation.id)}-${jobIdPart(data.slug)}` } },
        );
      }
    }
  }

  /**
   * `alert.fired`: the alert becomes the report's latest, then every linked record is updated through the same
   * coalesced `slug-update` as a score change, so one event writes each record once. The activity (note,
   * Task) is a job of its own per installation that switched it on.
   */
  private async alertFired(data: ReportEventJob): Promise<void> {
    if (!data.alert) return;
    const { line, at, text } = data.alert;
    const newest = await this.deps.alerts.record(data.slug, { line, at, eventId: data.eventId });
    if (!newest) return;
    await markSlugChanged(this.deps.redis, this.deps.keys, data.slug);
    for (const installationId of await this.deps.index.slugs.installationsForSlug(data.slug)) {
      await this.enqueueSlugUpdate(installationId, data.slug);
      const installation = await this.deps.installations.get(installationId);
      if (!installation?.alertActivity) continue;
      await this.deps.queues.add(
        'realtime',
        'alert-activity',
        { installationId, slug: data.slug, eventId: data.eventId, line, at, ...(text ? { text } : {}) },
        { jobId: `act-${jobIdPart(installationId)}-${jobIdPart(data.eventId)}` },
      );
    }
  }

  /** One activity per record linked to the alert's report; a retry skips the records already done. */
  async alertActivity(data: AlertActivityJob): Promise<void> {
    const { connector } = await this.deps.runtime.open(data.installationId, { urgent: true });
    if (!connector.createActivity) return;
    const activity = alertActivity(data);
    const linked = await this.deps.index.slugs.recordsForSlug(data.installationId, data.slug);
    for (const recordId of await this.mergedInto.resolve(data.installationId, linked)) {
      if (!(await this.deps.alerts.claimActivity(data.installationId, data.eventId, recordId))) continue;
      try {
        await connector.createActivity(recordId, activity);
      } catch (err) {
        await this.deps.alerts.releaseActivity(data.installationId, data.eventId, recordId);
        throw err;
      }
    }
  }

  /**
   * Writes a few records' fields from their current state now (a report request was just made), or, when the
   * CRM cannot take it at this moment, leaves the same work to the queue.
   */
  async refreshRecords(installationId: string, recordIds: string[]): Promise<void> {
    const job: BatchJob = { installationId, runId: null, batchId: 'refresh', mode: 'full', recordIds };
    try {
      const { connector, client } = await this.deps.runtime.open(installationId, { urgent: true });
      await this.enrich({ connector, client }, job);
    } catch (err) {
      this.deps.logger.warn({ err, installationId, recordIds }, 'record refresh deferred to the queue');
      await this.enqueueBatch('realtime', job, { delay: 1_000 });
    }
  }

  /**
   * Re-reads the reports marked for one installation (PendingSlugs) and updates every record linked to them,
   * gathered across the reports and written in the CRM's batch size. Each report is read once for the whole
   * job, shared by its batches and its reruns through a job-scoped cache; it is fresh without asking: every
   * change marks the slug changed before it is marked here, so no cached copy predates it, and a later change
   * marks it again and makes a rerun read anew (report-reader.ts). Marks are cleared only once the writes are
   * done, so a killed job's reports are updated by its rerun.
   */
  async slugUpdate(data: SlugUpdateJob, job: RunningJob<SlugUpdateJob>): Promise<void> {
    const lane = data.hot ? 'hot' : 'urgent';
    const { installationId } = data;
    // A job queued before the marks existed names its one slug.
    if (data.slug) await this.pendingSlugs.mark(installationId, data.slug, lane);
    const taken = await this.pendingSlugs.take(installationId, lane, SLUGS_PER_UPDATE);
    if (taken.length === 0) return;
    let work = taken;
    if (!data.hot) {
      // Marked as single changes, but a storm of the same report began meanwhile: they wait with the storm's.
      const hot = await Promise.all(taken.map((t) => this.deps.inbox.isHot(t.slug)));
      work = taken.filter((_, i) => !hot[i]);
      for (const t of taken.filter((_, i) => hot[i]))
        await this.pendingSlugs.mark(installationId, t.slug, 'hot');
      if (work.length < taken.length) await this.queueSlugUpdate(installationId, true);
    }
    const recordIds = new Set<string>();
    for (const { slug } of work) {
      const linked = await this.deps.index.slugs.recordsForSlug(installationId, slug);
      for (const id of await this.mergedInto.resolve(installationId, linked)) recordIds.add(id);
    }
    if (recordIds.size > 0) {
      // A hot update is deferrable: it reads in the lane that leaves the key's burst to single changes.
      const targets = await this.deps.runtime.open(installationId, { urgent: !data.hot });
      const runId = `ev-${job.id}`;
      for (const [i, ids] of chunk([...recordIds], targets.connector.limits.writeBatchSize).entries()) {
        await this.enrich(targets, {
          installationId,
          runId,
          batchId: `slug-${i}`,
          mode: 'reconcile',
          recordIds: ids,
        });
      }
    }
    await this.pendingSlugs.done(installationId, lane, taken);
    if (taken.length === SLUGS_PER_UPDATE) await this.queueSlugUpdate(installationId, data.hot === true);
  }

  /** A newly published report may resolve records that had no match or were waiting for review. */
  async reportCompleted(data: ReportCompletedJob): Promise<void> {
    const { connector, client } = await this.deps.runtime.open(data.installationId);
    let reportName: string;
    try {
      reportName = (await client.getReport(data.slug)).name;
    } catch (err) {
      if ((err as { code?: string }).code === 'REPORTS_NOT_FOUND') return;
      throw err;
    }
    const fits: string[] = [];
    for (const [recordId, name] of await this.deps.index.unlinkedNames(data.installationId)) {
      if (recordId === data.requestedRecordId) continue;
      if (this.deps.matching.mayConcern(name, reportName)) fits.push(recordId);
    }
    for (const [i, ids] of chunk(fits, connector.limits.writeBatchSize).entries()) {
      await this.enqueueBatch('realtime', {
        installationId: data.installationId,
        runId: null,
        batchId: `completed-${i}`,
        mode: 'full',
        recordIds: ids,
        matchRequested: true,
      });
    }
  }

  async crmChange({ installationId, change }: CrmChangeJob): Promise<void> {
    const single = (recordIds: string[], extra: Partial<BatchJob> = {}): BatchJob => ({
      installationId,
      runId: null,
      batchId: `change-${change.kind}`,
      mode: 'full',
      recordIds,
      ...extra,
    });
    const { connector, client } = await this.deps.runtime.open(installationId, { urgent: true });
    const targets = { connector, client };
    switch (change.kind) {
      case 'created':
        await this.enrich(targets, single([change.recordId]));
        return;
      case 'renamed':
      case 'domainChanged':
        // Only our own link is reconsidered; a person's link stays whatever the name says.
        await this.enrich(targets, single([change.recordId], { rematch: [change.recordId] }));
        return;
      case 'slugChanged': {
        // Our own write echoed back, or an event about a value the record no longer holds: nothing to do.
        const verdict = await judgeSlugChange(this.deps.index, connector, installationId, change);
        if (verdict.kind !== 'person') return;
        const { known } = verdict;
        await this.deps.index.dropAutoLink(installationId, change.recordId);
        // A slug set by hand is the person's link; a cleared one is told apart in the batch (plan.ts).
        await this.enrich(
          targets,
          single(
            [change.recordId],
            change.slug ? { freshSlugs: [change.slug], personSet: [change.recordId] } : {},
          ),
        );
        await this.logPersonChange(installationId, change, known);
        return;
      }
      case 'deleted':
        await this.deps.index.forget(installationId, [change.recordId]);
        return;
      case 'merged': {
        const losers = change.mergedIds.filter((id) => id !== change.mergedInto);
        // Events of the loser's report find the survivor while the link moves (merge-forwarding.ts).
        await this.mergedInto.record(installationId, losers, change.mergedInto);
        const carried = await this.carryLink(installationId, connector, losers, change);
        await this.enrich(targets, single([change.mergedInto], carried ? { freshSlugs: [carried] } : {}));
        await this.deps.index.forget(installationId, losers);
        return;
      }
    }
  }

  /** A person's own `report_slug` change, as the decision log keeps it: who, when the CRM says so. */
  private async logPersonChange(
    installationId: string,
    change: Extract<CrmChange, { kind: 'slugChanged' }>,
    previousSlug: string | null,
  ): Promise<void> {
    await this.deps.decisions.add(installationId, [
      {
        action: change.slug ? 'set' : 'clear',
        bulk: false,
        recordId: change.recordId,
        slug: change.slug,
        by: change.by ? { kind: 'crm-user', id: change.by } : { kind: 'crm', id: null },
        evidence: { previousSlug },
      },
    ]);
  }

  /**
   * A merge keeps the survivor's own values; when the survivor has no link and a merged-away record had one,
   * the survivor takes that link (an auto-link stays an auto-link, so undo still finds it). The slug comes
   * from the change (a CRM with a recycle bin shows the loser there) or from the index. Costs one read, and one
   * write when a link moves. Returns the slug carried over, or null.
   */
  private async carryLink(
    installationId: string,
    connector: CrmConnector,
    losers: string[],
    change: Extract<CrmChange, { kind: 'merged' }>,
  ): Promise<string | null> {
    const known = await this.deps.index.slugsOf(installationId, losers);
    const slug = change.mergedSlug || known.find((s): s is string => Boolean(s)) || null;
    if (!slug) return null;
    const [survivor] = await connector.readCompanies([change.mergedInto]);
    if (!survivor || (typeof survivor.fields.slug === 'string' && survivor.fields.slug.trim() !== ''))
      return null;
    const [written] = await connector.writeCompanies([{ id: change.mergedInto, values: { slug } }]);
    if (!written?.ok) return null;
    const autoLinked = (await this.deps.index.autoLinksOf(installationId, losers)).includes(slug);
    if (autoLinked) await this.deps.index.markAutoLink(installationId, change.mergedInto, slug);
    return slug;
  }

  /** The change poll of a CRM without webhooks: compares what changed with what was last seen. */
  async poll({ installationId }: PollJob): Promise<void> {
    const { connector } = await this.deps.runtime.open(installationId);
    if (!isPolled(connector)) return;
    const previous = await this.deps.index.pollCursors.get(installationId);
    const {
      records,
      cursor: next,
      changes: removals = [],
      resync,
    } = await connector.listChangedSince(previous?.cursor ?? null);
    // The CRM lost track of deletions since the cursor: a full listing finds what is gone (unlisted-records.ts).
    if (previous && resync) await this.startSync(installationId, 'full', { forgetUnlisted: true });
    // The first poll only sets the cursor: what exists already is the backfill's to process.
    const firstPollAt = previous?.since ?? Date.now();
    if (previous && records.length + removals.length > 0) {
      const changes = await this.changesFromPoll(installationId, records, firstPollAt);
      await this.enqueueCrmChanges(installationId, [...removals, ...changes]);
    }
    await this.deps.index.pollCursors.set(installationId, { cursor: next, since: firstPollAt });
  }

  private async changesFromPoll(
    installationId: string,
    records: ChangedRecord[],
    firstPollAt: number,
  ): Promise<CrmChange[]> {
    const seen = await this.deps.index.fingerprints(
      installationId,
      records.map((r) => r.id),
    );
    const changes: CrmChange[] = [];
    records.forEach((record, i) => {
      const before = seen[i];
      const now = fingerprintOf(record);
      if (before === null || before === undefined) {
        // Not seen and older than polling: a backfill is still on its way to it (its own writes bump the stamp).
        if (Date.parse(record.createdAt) >= firstPollAt)
          changes.push({ kind: 'created', recordId: record.id });
        return;
      }
      // The index keeps a digest of each part: enough to tell which one changed.
      const nowDigest = digestFingerprint(now);
      if (sameFingerprint(before, nowDigest)) return; // our own write, or a field we do not watch
      if (before.slug !== nowDigest.slug) {
        changes.push({
          kind: 'slugChanged',
          recordId: record.id,
          slug: now.slug || null,
          ...(record.modifiedBy ? { by: record.modifiedBy } : {}),
        });
      } else if (before.name !== nowDigest.name) changes.push({ kind: 'renamed', recordId: record.id });
      else if (before.domain !== nowDigest.domain)
        changes.push({ kind: 'domainChanged', recordId: record.id });
    });
    return changes;
  }

  /**
   * A person's decision on the review queue, written to the CRM at once: accept a candidate or set a slug by
   * hand (the record is linked and enriched now, as a person's link), or reject the candidates (never offered
   * again for this record; the record becomes `no_match`).
   */
  async resolveReview(
    installationId: string,
    recordId: string,
    decision: { action: 'link'; slug: string } | { action: 'reject' },
  ): Promise<void> {
    const { connector, client } = await this.deps.runtime.open(installationId, { urgent: true });
    const { index } = this.deps;
    if (decision.action === 'reject') {
      const item = await index.reviews.item(installationId, recordId);
      await index.reviews.addRejectedSlugs(
        installationId,
        recordId,
        (item?.candidates ?? []).map((c) => c.slug),
      );
    } else {
      // Refuses a slug with no published report before anything is written (ReportNotFoundError).
      await client.getReport(decision.slug);
      const [result] = await connector.writeCompanies([
        { id: recordId, values: { slug: decision.slug, linkSource: 'admin' } },
      ]);
      if (result && !result.ok) throw new ReviewWriteError(result.error.message, result.error.code);
      await index.dropAutoLink(installationId, recordId);
    }
    await this.enrich(
      { connector, client },
      {
        installationId,
        runId: null,
        batchId: 'review',
        mode: 'full',
        recordIds: [recordId],
        freshSlugs: decision.action === 'link' ? [decision.slug] : [],
        // Rejecting every candidate is the admin's decision that the record has no report.
        ...(decision.action === 'reject' ? { adminUnlink: [recordId] } : {}),
      },
    );
  }

  /**
   * An admin's "this is not the company": each record becomes `no_match` with source `admin` and is never
   * auto-linked again. Written through the batch path in the CRM's batch size, like any other update.
   */
  async unlinkRecords(installationId: string, recordIds: string[]): Promise<void> {
    await this.enrichInChunks(installationId, 'unlink', recordIds, (ids) => ({ adminUnlink: ids }));
  }

  /**
   * Many review decisions at once (review at scale): accepted links (record id -> slug) become the admin's
   * links and rejected records (record id -> the candidates rejected) the admin's `no_match`. Both go through
   * the batch path in the CRM's batch size, so a thousand decisions cost a few batch reads and writes, never
   * one CRM call per record. A slug whose report is gone by now leaves its record linked and `not_published`,
   * as any other link.
   */
  async resolveReviews(
    installationId: string,
    links: ReadonlyMap<string, string>,
    rejected: ReadonlyMap<string, readonly string[]>,
  ): Promise<void> {
    for (const [recordId, slugs] of rejected) {
      await this.deps.index.reviews.addRejectedSlugs(installationId, recordId, [...slugs]);
    }
    await this.enrichInChunks(installationId, 'review-bulk', [...links.keys(), ...rejected.keys()], (ids) => {
      const linked = ids.filter((id) => links.has(id));
      return {
        adminLinks: Object.fromEntries(linked.map((id) => [id, links.get(id)!])),
        adminUnlink: ids.filter((id) => rejected.has(id)),
        freshSlugs: [...new Set(linked.map((id) => links.get(id)!))],
      };
    });
  }

  /**
   * A re-match asked for: a person's or an admin's `no_match` is lifted and the records are matched again as
   * in a full sync (rejected candidates stay rejected). A record holding a link keeps it.
   */
  async rematchRecords(installationId: string, recordIds: string[]): Promise<void> {
    await this.enrichInChunks(installationId, 'rematch', recordIds, (ids) => ({ release: ids }));
  }

  /** Event-driven batches over many records, in the CRM's read size (each batch reads, then writes in bulk). */
  private async enrichInChunks(
    installationId: string,
    name: string,
    recordIds: string[],
    extra: (ids: string[]) => Partial<BatchJob>,
  ): Promise<void> {
    if (recordIds.length === 0) return;
    const targets = await this.deps.runtime.open(installationId, { urgent: true });
    for (const [i, ids] of chunk(recordIds, targets.connector.limits.readBatchSize).entries()) {
      await this.enrich(targets, {
        installationId,
        runId: null,
        batchId: `${name}-${i}`,
        mode: 'full',
        recordIds: ids,
        ...extra(ids),
      });
    }
  }

  /**
   * Removes the auto-links one run made. A record is left alone when its link is no longer that run's:
   * another slug, or a source other than `auto` (a person or an admin touched it since).
   */
  async undoRun(
    installationId: string,
    runId: string,
  ): Promise<{ unlinked: number; kept: number; undone: Map<string, string> }> {
    const made = await new RunLinks(this.deps.redis, this.deps.keys).linksOf(installationId, runId);
    if (made.size === 0) return { unlinked: 0, kept: 0, undone: new Map() };
    const { connector } = await this.deps.runtime.open(installationId, { urgent: true });
    const ids = [...made.keys()];
    const still: string[] = [];
    for (const part of chunk(ids, connector.limits.readBatchSize)) {
      for (const record of await connector.readCompanies(part)) {
        const ours =
          record.fields.slug === made.get(record.id) &&
          (record.fields.linkSource === 'auto' || record.fields.linkSource == null);
        if (ours) still.push(record.id);
      }
    }
    await this.unlinkRecords(installationId, still);
    // Which link each undone record lost: the decision log's evidence.
    const undone = new Map(still.map((id) => [id, made.get(id)!]));
    return { unlinked: still.length, kept: ids.length - still.length, undone };
  }

  /** Change polling for CRMs without webhooks, every `everyMs`. */
  async schedulePoll(installationId: string, everyMs: number): Promise<void> {
    await this.removeLegacyPoll(installationId);
    await this.deps.queues.every(`poll-${jobIdPart(installationId)}`, everyMs, 'poll', { installationId });
  }

  /** A poll scheduled under the old job-id encoding would otherwise run beside the new one. */
  private async removeLegacyPoll(installationId: string): Promise<void> {
    const legacy = `poll-${legacyJobIdPart(installationId)}`;
    if (legacy !== `poll-${jobIdPart(installationId)}`) await this.deps.queues.stopSchedule(legacy);
  }

  /**
   * A fan-out of score changes every SCORE_CHANGES_SWEEP_MS whatever arrives: marks left by an ingest that died
   * before it queued the fan-out are taken up even when no later event comes.
   */
  async scheduleScoreChangeSweep(): Promise<void> {
    await this.deps.queues.every('score-changes', SCORE_CHANGES_SWEEP_MS, 'score-changes', {});
  }

  /** The reconcile sweep, every `everyMs` (RECONCILE_HOURS). */
  async scheduleReconcile(everyMs: number): Promise<void> {
    await this.deps.queues.every('reconcile', everyMs, 'reconcile', {});
  }

  /** Stops an installation's scheduled work and open runs; queued jobs then stop on their own. */
  async stopInstallation(
    installationId: string,
    reason = 'the installation was disconnected',
  ): Promise<void> {
    await this.deps.queues.stopSchedule(`poll-${jobIdPart(installationId)}`);
    await this.removeLegacyPoll(installationId);
    for (const run of await this.deps.runs.recent(installationId, 50)) {
      if (run.state === 'listing' || run.state === 'processing') await this.deps.runs.stop(run.id, reason);
    }
  }

  /** The daily sweep: a reconcile run for every connected installation. */
  async reconcileAll(): Promise<void> {
    for (const installation of await this.deps.installations.list()) {
      if (installation.status === 'connected') await this.startSync(installation.id, 'reconcile');
    }
  }
}

export class ReviewWriteError extends Error {
  readonly code = 'REVIEW_WRITE_FAILED';
  constructor(
    message: string,
    readonly recordErrorCode: string,
  ) {
    super(`the CRM refused the link: ${message}`);
    this.name = 'ReviewWriteError';
  }
}

function chunk<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
