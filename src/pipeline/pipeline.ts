import type { Logger } from 'pino';
import type { AlertStore } from '../alerts/alert-store.js';
import type { CrmChange } from '../crm/connector.js';
import type { DecisionLog } from '../decisions/decision-log.js';
import type { InstallationStore } from '../installations/store.js';
import type { Metrics } from '../metrics.js';
import type { RedisClient } from '../redis.js';
import type { ReportClient } from '../reports/client.js';
import type { RequestStore } from '../requests/request-store.js';
import type { ActiveRun } from '../storage/active-runs.js';
import type { ChangeStreamStates } from '../storage/change-stream-states.js';
import type { EventLatencies } from '../storage/event-latency.js';
import type { Keys } from '../storage/keys.js';
import type { LinkIndex } from '../storage/link-index.js';
import type { MergeForwarding } from '../storage/merge-forwarding.js';
import type { RecordLocks } from '../storage/record-locks.js';
import type { RunLinks } from '../storage/run-links.js';
import {
  KEPT_RUNS,
  laneOf,
  type RunKind,
  type RunSummary,
  runRank,
  type SyncRuns,
  type SyncStart,
} from '../storage/runs.js';
import type { SlugChanges } from '../storage/slug-changes.js';
import type { BatchJob } from './batch-job.js';
import type { ListJob, VerifiedReportEvent } from './jobs.js';
import type { MatchingStrategy } from './matching-strategy.js';
import { jobIdPart, type Queues } from './queues.js';
import type { ReportReader, ReportReaderOptions } from './report-reader.js';
import { DEFAULT_RUN_BOUNDS, deadRunReason, type RunBounds } from './run-liveness.js';
import type { InstallationRuntime } from './runtime.js';
import type { ScoreChangeInbox } from './score-changes/inbox.js';
import type { PendingSlugs } from './score-changes/pending-slugs.js';
import * as updates from './score-changes/updates.js';
import type { UnlistedRecords } from './unlisted-records.js';

/**
 * The enrichment pipeline's producer side: what callers enqueue, and the dependencies every job handler
 * (handlers/<job>.ts, dispatched by workers.ts) works with. Each handler is written to be safe to run again;
 * workers.ts decides what a failure means for its job.
 */

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
  /** Reports whose records wait for an update, per installation. */
  pendingSlugs: PendingSlugs;
  /** The records a resync's listing saw. */
  unlisted: UnlistedRecords;
  /** Merged-away records and their survivor. */
  mergedInto: MergeForwarding;
  /** The links each run made (what undoing a run takes back). */
  runLinks: RunLinks;
  /** From an event to its CRM write, per source (the metrics' histogram). */
  latencies: EventLatencies;
  /** When each report last changed (an event, an alert, a publication). */
  slugChanges: SlugChanges;
  /** The locks a batch holds on its records while it compares and writes. */
  recordLocks: RecordLocks;
  /** Whether an installation's change stream is healthy: its scheduled poll then calls nothing (handlers/poll.ts). */
  streamStates: ChangeStreamStates;
  /** A view of the report cache through one report key's client. */
  reportReader(client: ReportClient, options: Pick<ReportReaderOptions, 'readSince'>): ReportReader;
  logger: Logger;
  metrics?: Metrics;
  /** RECONCILE_HOURS in ms: how often every linked slug is read from the service at least (reconcileAll). */
  reconcilePeriodMs?: number;
  /** When a run under way counts as dead (run-liveness.ts); tests shorten them. */
  runBounds?: RunBounds;
}

/** RECONCILE_HOURS' default. */
const DEFAULT_RECONCILE_PERIOD_MS = 24 * 3_600_000;
/**
 * An installation skipped by the reconcile because a run was under way is looked at again this soon: should
 * that run not end done, its reconcile is not a whole period late.
 */
const UNDER_WAY_RECHECK_MS = 3_600_000;

/** What the reconcile did for one installation. */
export type ReconcileOutcome =
  | { installationId: string; action: 'started' | 'joined'; runId: string }
  | { installationId: string; action: 'skipped'; why: 'under_way' | 'recent_pass'; recheckInMs: number };

export class Pipeline {
  /** Reports whose records wait for an update, per installation (what `slug-update` jobs take). */
  readonly pendingSlugs: PendingSlugs;
  /** The records a resync's listing saw, to forget the indexed ones it did not (unlisted-records.ts). */
  readonly unlisted: UnlistedRecords;
  /** Merged-away records and their survivor, while the link moves (merge-forwarding.ts). */
  readonly mergedInto: MergeForwarding;

  constructor(readonly deps: PipelineDeps) {
    this.pendingSlugs = deps.pendingSlugs;
    this.unlisted = deps.unlisted;
    this.mergedInto = deps.mergedInto;
    const { metrics } = deps;
    if (metrics) deps.runs.onStopped((code) => metrics.runsStopped.inc({ reason: code }));
  }

  /**
   * Asks for a sync run; returns the id of the run that does it. A full run also matches unlinked records; a
   * preview matches as a full run does and writes nothing. See requestSync: a run under way is joined.
   */
  async startSync(
    installationId: string,
    kind: RunKind,
    options: { forgetUnlisted?: boolean } = {},
  ): Promise<string> {
    return (await this.requestSync(installationId, kind, options)).runId;
  }

  /**
   * One pass at a time per installation: a sync asked for while one is under way joins it; one that covers
   * more (a full sync during an incremental or reconcile run: runRank) supersedes it, which stops it. A
   * preview has its own lane (it never joins nor blocks a sync). A run found dead (run-liveness.ts) is stopped
   * with its reason and never joined. `restart`: supersede the run under way whatever it covers, as a setting
   * it ran under changed (fixture writes allowed).
   */
  async requestSync(
    installationId: string,
    kind: RunKind,
    options: { forgetUnlisted?: boolean; restart?: boolean } = {},
  ): Promise<SyncStart> {
    const { runs, metrics } = this.deps;
    const { adopt, dead } = await this.laneState(installationId, kind);
    const start = await runs.begin(installationId, kind, { ...options, adopt, dead });
    if (start === null) {
      // The installation is gone: a run of its own, as before there were lanes; its list job stops it.
      const runId = await runs.start(installationId, kind);
      await this.queueListing(installationId, runId, kind, options);
      return { runId, joined: false, supersededRunId: null };
    }
    if (start.joined) {
      metrics?.runsJoined.inc({ kind });
      this.deps.logger.info({ installationId, kind, runId: start.runId }, 'sync joined the run under way');
      return start;
    }
    if (start.supersededRunId) {
      metrics?.runsSuperseded.inc({ kind });
      this.deps.logger.info(
        { installationId, runId: start.runId, superseded: start.supersededRunId },
        'a full sync superseded the run under way',
      );
    }
    await this.queueListing(installationId, start.runId, kind, options);
    return start;
  }

  private async queueListing(
    installationId: string,
    runId: string,
    kind: RunKind,
    options: { forgetUnlisted?: boolean },
  ): Promise<void> {
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
  }

  /**
   * The lane's run before a request: the run to adopt when the lane was never written (runs of older code are
   * found in the history), and the run not to join because it ended or is dead (stopped here, with why).
   */
  private async laneState(
    installationId: string,
    kind: RunKind,
  ): Promise<{ adopt: ActiveRun | null; dead: string | null }> {
    const lane = laneOf(kind);
    const { known, run: pointed } = await this.deps.runs.active.current(installationId, lane);
    let adopt: ActiveRun | null = null;
    let candidate: RunSummary | null = null;
    if (known) {
      candidate = pointed ? await this.deps.runs.get(pointed.runId) : null;
      if (pointed && !candidate) return { adopt: null, dead: pointed.runId };
    } else {
      candidate = await this.olderRunUnderWay(installationId, lane);
      if (candidate)
        adopt = {
          runId: candidate.id,
          kind: candidate.kind,
          rank: runRank(candidate.kind, candidate.forgetUnlisted),
        };
    }
    if (!candidate) return { adopt: null, dead: null };
    if ((await this.checkRun(candidate)) === 'alive') return { adopt, dead: null };
    return { adopt: null, dead: candidate.id };
  }

  /**
   * Runs started by code from before the lanes were not on a lane: the newest one under way in the history is
   * the lane's (read once, when the installation's lane is first written).
   */
  private async olderRunUnderWay(
    installationId: string,
    lane: 'sync' | 'preview',
  ): Promise<RunSummary | null> {
    for (const run of await this.deps.runs.recent(installationId, KEPT_RUNS)) {
      if (laneOf(run.kind) !== lane) continue;
      if (run.state === 'listing' || run.state === 'processing') return run;
    }
    return null;
  }

  /**
   * Stops a run under way that can no longer end (no progress for `staleMs`, or no job left), with why;
   * says whether it is still alive. `sync --wait` calls it while it follows a run.
   */
  async checkRun(run: RunSummary | string): Promise<'alive' | 'ended' | 'stopped'> {
    const summary = typeof run === 'string' ? await this.deps.runs.get(run) : run;
    if (!summary) return 'ended';
    const why = await deadRunReason(this.deps.queues, summary, this.deps.runBounds ?? DEFAULT_RUN_BOUNDS);
    if (why === null) return 'alive';
    if (why === 'ended') return 'ended';
    this.deps.logger.warn({ runId: summary.id, reason: why.reason }, 'sync run stopped: it could not end');
    await this.deps.runs.stop(summary.id, why.reason, why.code);
    return 'stopped';
  }

  /**
   * The daily sweep (the `reconcile` job): a reconcile run for every connected installation that needs one
   * (reconcileInstallation).
   */
  async reconcileAll(now = Date.now()): Promise<ReconcileOutcome[]> {
    const outcomes: ReconcileOutcome[] = [];
    for (const installation of await this.deps.installations.list()) {
      if (installation.status === 'connected')
        outcomes.push(await this.reconcileInstallation(installation.id, now));
    }
    return outcomes;
  }

  /**
   * Every linked slug is read from the service at least once per reconcile period: a done pass (any run but
   * a preview lists every record and reads the report of each linked one) started within the period makes a
   * reconcile needless until the period has passed since that start, when this installation is looked at
   * again (a delayed `reconcile` job of its own); a run under way is looked at again within the hour, in case
   * it does not end done. Otherwise a reconcile run starts (or joins a run that started meanwhile).
   */
  async reconcileInstallation(installationId: string, now = Date.now()): Promise<ReconcileOutcome> {
    const period = this.deps.reconcilePeriodMs ?? DEFAULT_RECONCILE_PERIOD_MS;
    const history = await this.deps.runs.recent(installationId, KEPT_RUNS);
    const underWay = history.find(
      (r) => r.kind !== 'preview' && (r.state === 'listing' || r.state === 'processing'),
    );
    if (underWay && (await this.checkRun(underWay)) === 'alive') {
      const recheckInMs = Math.min(period, UNDER_WAY_RECHECK_MS);
      await this.queueReconcileCheck(installationId, now + recheckInMs, now);
      return { installationId, action: 'skipped', why: 'under_way', recheckInMs };
    }
    const lastPass = history.find((r) => r.kind !== 'preview' && r.state === 'done');
    const passStart = lastPass ? Date.parse(lastPass.startedAt) : Number.NaN;
    if (passStart > now - period) {
      const recheckInMs = passStart + period - now;
      await this.queueReconcileCheck(installationId, passStart + period, now);
      return { installationId, action: 'skipped', why: 'recent_pass', recheckInMs };
    }
    const start = await this.requestSync(installationId, 'reconcile');
    return { installationId, action: start.joined ? 'joined' : 'started', runId: start.runId };
  }

  /** One delayed check per installation and minute: a sweep that skips it again queues no second one. */
  private async queueReconcileCheck(installationId: string, at: number, now: number): Promise<void> {
    const minute = Math.ceil(at / 60_000);
    await this.deps.queues.add(
      'schedule',
      'reconcile',
      { installationId },
      {
        jobId: `reconcile-${jobIdPart(installationId)}-${minute}`,
        delay: Math.max(0, minute * 60_000 - now),
      },
    );
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

  async enqueueCrmChanges(installationId: string, changes: CrmChange[]): Promise<void> {
    if (changes.length === 0) return;
    await this.deps.queues.addBulk(
      'realtime',
      'crm-change',
      changes.map((change) => ({
        data: { installationId, change },
        opts: {
          delay: updates.COALESCE_MS,
          // One pending job per record: a burst of edits becomes one re-read of the record.
          deduplication: {
            id: `chg-${jobIdPart(installationId)}-${jobIdPart(change.recordId)}-${change.kind}`,
            keepLastIfActive: true,
          },
        },
      })),
    );
  }

  /** What queueing a score change's update uses (score-changes/updates.ts#enqueueSlugUpdate). */
  updateQueue(): updates.UpdateQueueDeps {
    return { queues: this.deps.queues, inbox: this.deps.inbox, pendingSlugs: this.pendingSlugs };
  }

  async enqueueBatch(
    queue: 'backfill' | 'realtime',
    job: BatchJob,
    opts: { jobId?: string; delay?: number } = {},
  ): Promise<void> {
    await this.deps.queues.add(queue, 'batch', job, opts);
  }
}
