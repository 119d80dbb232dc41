import type { Logger } from 'pino';
import type { AlertStore } from '../alerts/alert-store.js';
import type { CrmChange } from '../crm/connector.js';
import type { DecisionLog } from '../decisions/decision-log.js';
import type { InstallationStore } from '../installations/store.js';
import type { Metrics } from '../metrics.js';
import type { RedisClient } from '../redis.js';
import type { RequestStore } from '../requests/request-store.js';
import type { Keys } from '../storage/keys.js';
import type { LinkIndex } from '../storage/link-index.js';
import { MergeForwarding } from '../storage/merge-forwarding.js';
import { PendingSlugs } from '../storage/pending-slugs.js';
import type { RunKind, SyncRuns } from '../storage/runs.js';
import type { ScoreChangeInbox } from '../storage/score-change-inbox.js';
import type { VerifiedReportEvent } from '../webhooks/report-route.js';
import type { BatchJob } from './batch-job.js';
import type { ListJob } from './jobs.js';
import type { MatchingStrategy } from './matching-strategy.js';
import { jobIdPart, type Queues } from './queues.js';
import type { InstallationRuntime } from './runtime.js';
import { UnlistedRecords } from './unlisted-records.js';

/**
 * The enrichment pipeline's producer side: what callers enqueue, and the dependencies every job handler
 * (handlers/<job>.ts, dispatched by workers.ts) works with. Each handler is written to be safe to run again;
 * workers.ts decides what a failure means for its job.
 */

/** Events for one slug inside this window become one read and one write per record. */
export const COALESCE_MS = 300;
/**
 * A hot slug's updates coalesce over this long: a storm on K reports then costs at most K reads (and CRM
 * reads) per HOT_COALESCE_MS, which leaves most of the report key's and the CRM's budget to single changes.
 * Its records still end with the storm's last score.
 */
export const HOT_COALESCE_MS = 20_000;

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

export class Pipeline {
  /** Reports whose records wait for an update, per installation (what `slug-update` jobs take). */
  readonly pendingSlugs: PendingSlugs;
  /** The records a resync's listing saw, to forget the indexed ones it did not (unlisted-records.ts). */
  readonly unlisted: UnlistedRecords;
  /** Merged-away records and their survivor, while the link moves (merge-forwarding.ts). */
  readonly mergedInto: MergeForwarding;

  constructor(readonly deps: PipelineDeps) {
    this.pendingSlugs = new PendingSlugs(deps.redis, deps.keys);
    this.unlisted = new UnlistedRecords(deps.redis, deps.keys);
    this.mergedInto = new MergeForwarding(deps.redis, deps.keys);
  }

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

  /** The daily sweep (the `reconcile` job): a reconcile run for every connected installation. */
  async reconcileAll(): Promise<void> {
    for (const installation of await this.deps.installations.list()) {
      if (installation.status === 'connected') await this.startSync(installation.id, 'reconcile');
    }
  }

  /**
   * A verified report-service event other than `score.changed` (which the route hands to the score-change
   * inbox), already deduplicated by the webhook route: one `report-event` job per event, as each carries its
   * own payload (a submission, an alert line).
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
      { jobId: `evt-${jobIdPart(event.id)}` },
    );
  }

  /**
   * A new fan-out of the score-change inbox's marks (the `score-changes` job). Not deduplicated: the inbox's
   * kick mark already makes this rare (once per idle-to-busy change, and once per fan-out's last round), and
   * a fan-out that is just finishing must never swallow the next one. Two fan-outs at once are harmless: each
   * take is atomic.
   */
  async kickScoreChanges(): Promise<void> {
    await this.deps.queues.add('realtime', 'score-changes', {});
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

  /**
   * Marks a slug's linked records for an update and makes sure the installation's update job is queued. The
   * job takes every slug marked by then and writes their records together, in full CRM batches: a burst of
   * changes on many reports costs about one write per batch of records (`limits.writeBatchSize`), not one per
   * report. A slug asked for again and again (a storm of re-scores) is hot: it waits in its own lane, whose job
   * runs on the backfill queue's workers behind the backfill's own batches and reads in the report key's
   * deferrable lane, so a storm never takes the realtime workers or the key's burst from a single change.
   */
  async enqueueSlugUpdate(installationId: string, slug: string): Promise<void> {
    const hot = await this.deps.inbox.isHot(slug);
    await this.pendingSlugs.mark(installationId, slug, hot ? 'hot' : 'urgent');
    await this.queueSlugUpdate(installationId, hot);
  }

  /** The installation's `slug-update` job of one lane, for the slugs marked in it. */
  async queueSlugUpdate(installationId: string, hot: boolean): Promise<void> {
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

  async enqueueBatch(
    queue: 'backfill' | 'realtime',
    job: BatchJob,
    opts: { jobId?: string; delay?: number } = {},
  ): Promise<void> {
    await this.deps.queues.add(queue, 'batch', job, opts);
  }
}
