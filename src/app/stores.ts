import { AlertStore } from '../alerts/alert-store.js';
import { LoginThrottle } from '../auth/login-throttle.js';
import { SessionRevocations } from '../auth/session-revocations.js';
import type { CrmKind } from '../crm/kind.js';
import type { ProviderStorage } from '../crm/provider.js';
import { DecisionLog } from '../decisions/decision-log.js';
import { MassActionLog } from '../decisions/mass-actions.js';
import { InstallationStore } from '../installations/store.js';
import { ReportReader, type ReportReaderOptions } from '../pipeline/report-reader.js';
import { ScoreChangeInbox } from '../pipeline/score-changes/inbox.js';
import { PendingSlugs } from '../pipeline/score-changes/pending-slugs.js';
import { UnlistedRecords } from '../pipeline/unlisted-records.js';
import type { RedisClient } from '../redis.js';
import type { ReportClient } from '../reports/client.js';
import { RequestStore } from '../requests/request-store.js';
import { ActiveRuns } from '../storage/active-runs.js';
import { ChangeStreamStates } from '../storage/change-stream-states.js';
import { EventLatencies } from '../storage/event-latency.js';
import { EventLog } from '../storage/event-log.js';
import type { Keys } from '../storage/keys.js';
import { LinkIndex } from '../storage/link-index.js';
import { MergeForwarding } from '../storage/merge-forwarding.js';
import { PollCursors } from '../storage/poll-cursor.js';
import { RecordLocks } from '../storage/record-locks.js';
import { ReviewQueue } from '../storage/review-queue.js';
import { RunLinks } from '../storage/run-links.js';
import { SyncRuns } from '../storage/runs.js';
import { SlugChanges } from '../storage/slug-changes.js';
import { SlugFanout } from '../storage/slug-fanout.js';
import { SlugIndex } from '../storage/slug-index.js';
import { StatusCounts } from '../storage/status-counts.js';
import { UndoReads } from '../storage/undo-reads.js';
import type { SecretBox } from '../util/secretbox.js';
import { CrmEventMarks } from '../webhooks/crm-event-marks.js';
import { CrmUsageStore } from './crm-usage.js';

/**
 * Every Redis store of one process, built here once and handed to what uses it: nothing else in `src/` or
 * `connectors/` constructs a store (test/store-construction.test.ts). A consumer takes the store it uses, not
 * Redis and the keys to build its own.
 */

export interface Stores {
  installations: InstallationStore;
  index: LinkIndex;
  runs: SyncRuns;
  events: EventLog;
  /** The score-change inbox, on its own connection (context.ts says why). */
  inbox: ScoreChangeInbox;
  requests: RequestStore;
  alerts: AlertStore;
  decisions: DecisionLog;
  pendingSlugs: PendingSlugs;
  unlisted: UnlistedRecords;
  mergedInto: MergeForwarding;
  runLinks: RunLinks;
  /** What an undo preview read of the CRM, kept for its confirmation. */
  undoReads: UndoReads;
  latencies: EventLatencies;
  /** When each report last changed, for reads and writes that must not be older (storage/slug-changes.ts). */
  slugChanges: SlugChanges;
  /** The locks a batch holds on its records while it compares and writes (storage/record-locks.ts). */
  recordLocks: RecordLocks;
  /** The CRM API usage each installation's connectors last saw (crm-usage.ts). */
  crmUsage: CrmUsageStore;
  massActions: MassActionLog;
  revocations: SessionRevocations;
  loginThrottle: LoginThrottle;
  /** Where each installation's changes come from, as its change stream last said (app/change-streams.ts). */
  streamStates: ChangeStreamStates;
  /** One set of webhook event marks per CRM (webhooks/crm-event-marks.ts). */
  eventMarks(kind: CrmKind): CrmEventMarks;
  /** A view of the report cache through one report key's client (pipeline/report-reader.ts). */
  reportReader(client: ReportClient, options: Pick<ReportReaderOptions, 'readSince'>): ReportReader;
  /** What a provider keeps its own records with; one object, so a provider may build its stores once per process. */
  provider: ProviderStorage;
}

export interface StoreConnections {
  /** Fail-fast connection for request handlers and producers. */
  redis: RedisClient;
  /** The inbox's connection of its own. */
  ingest: RedisClient;
}

export interface StoreOptions {
  prefix: string;
  box: SecretBox;
  /** REPORT_CACHE_SECONDS (report-reader.ts has the default). */
  reportCacheSeconds?: number;
}

export function createStores(connections: StoreConnections, keys: Keys, options: StoreOptions): Stores {
  const { redis } = connections;
  const { prefix, box } = options;
  const eventMarks = new Map<CrmKind, CrmEventMarks>();
  const cache = options.reportCacheSeconds === undefined ? {} : { cacheSeconds: options.reportCacheSeconds };
  return {
    installations: new InstallationStore(redis, box, prefix),
    index: linkIndexOf(redis, keys),
    runs: syncRunsOf(redis, keys),
    events: new EventLog(redis, keys),
    inbox: new ScoreChangeInbox(connections.ingest, keys),
    requests: new RequestStore(redis, keys),
    alerts: new AlertStore(redis, keys),
    decisions: new DecisionLog(redis, keys),
    pendingSlugs: new PendingSlugs(redis, keys),
    unlisted: new UnlistedRecords(redis, keys),
    mergedInto: new MergeForwarding(redis, keys),
    runLinks: new RunLinks(redis, keys),
    undoReads: new UndoReads(redis, keys),
    latencies: new EventLatencies(redis, keys),
    slugChanges: new SlugChanges(redis, keys),
    recordLocks: new RecordLocks(redis, keys),
    crmUsage: new CrmUsageStore(redis, keys),
    massActions: new MassActionLog(redis, keys),
    revocations: new SessionRevocations(redis, prefix),
    loginThrottle: new LoginThrottle(redis, prefix),
    streamStates: new ChangeStreamStates(redis, keys),
    eventMarks(kind) {
      let marks = eventMarks.get(kind);
      if (!marks) {
        marks = new CrmEventMarks(redis, keys, kind);
        eventMarks.set(kind, marks);
      }
      return marks;
    },
    reportReader: (client, readerOptions) =>
      new ReportReader(redis, keys, client, { ...cache, ...readerOptions }),
    provider: providerStorage(redis, keys, box),
  };
}

/** The link index with its parts (also what tests build one with). */
export function linkIndexOf(redis: RedisClient, keys: Keys): LinkIndex {
  const fanout = new SlugFanout(redis, keys);
  return new LinkIndex(redis, keys, {
    fanout,
    reviews: new ReviewQueue(redis, keys),
    slugs: new SlugIndex(redis, keys, fanout),
    pollCursors: new PollCursors(redis, keys),
    statuses: new StatusCounts(redis, keys),
  });
}

/** The sync runs with the runs under way (also what tests build them with). */
export function syncRunsOf(redis: RedisClient, keys: Keys): SyncRuns {
  return new SyncRuns(redis, keys, new ActiveRuns(redis, keys));
}

/** Redis, its keys and the box for the providers, and the stores they build once on them (tests build one too). */
export function providerStorage(redis: RedisClient, keys: Keys, box: SecretBox): ProviderStorage {
  const built = new Map<string, unknown>();
  return {
    redis,
    keys,
    box,
    store<T>(name: string, make: () => T): T {
      if (!built.has(name)) built.set(name, make());
      return built.get(name) as T;
    },
  };
}
