import type { Logger } from 'pino';
import { OAuthStateStore } from '../auth/oauth-state.js';
import { TokenManager, type TokenRefresher } from '../auth/token-manager.js';
import type { Config } from '../config.js';
import type { CrmKind } from '../crm/connector.js';
import type { ProviderStorage } from '../crm/provider.js';
import type { DecisionLog } from '../decisions/decision-log.js';
import type { InstallationStore } from '../installations/store.js';
import { Metrics } from '../metrics.js';
import { InstallationStop } from '../pipeline/installation-stop.js';
import type { MatchingStrategy } from '../pipeline/matching-strategy.js';
import { Pipeline } from '../pipeline/pipeline.js';
import { Queues } from '../pipeline/queues.js';
import { Schedules } from '../pipeline/schedules.js';
import type { ScoreChangeInbox } from '../pipeline/score-changes/inbox.js';
import { PipelineWorkers } from '../pipeline/workers.js';
import { kindOf, providers } from '../providers.js';
import { RecordCommands } from '../records/record-commands.js';
import { closeRedis, createRedis, type RedisClient } from '../redis.js';
import type { RequestStore } from '../requests/request-store.js';
import type { EventLog } from '../storage/event-log.js';
import { Keys } from '../storage/keys.js';
import type { LinkIndex } from '../storage/link-index.js';
import type { SyncRuns } from '../storage/runs.js';
import { SecretBox } from '../util/secretbox.js';
import { ChangeStreams } from './change-streams.js';
import { defaultMatching } from './matching.js';
import { ReportRequests } from './report-requests.js';
import { AppRuntime } from './runtime.js';
import { createStores, type Stores } from './stores.js';

/**
 * Everything one process needs, built once from the configuration. `serve`, `worker`, `start`, the CLI's
 * one-shot commands and the tests all go through here, so they share one wiring.
 */

export interface AppContext {
  config: Config;
  logger: Logger;
  metrics: Metrics;
  /** Fail-fast connection for request handlers and producers. */
  redis: RedisClient;
  keys: Keys;
  /**
   * Every store, built once (stores.ts). The most used of them are also members of their own below, by the
   * names the application has always read them by.
   */
  stores: Stores;
  installations: InstallationStore;
  tokens: TokenManager;
  states: OAuthStateStore;
  index: LinkIndex;
  runs: SyncRuns;
  queues: Queues;
  events: EventLog;
  runtime: AppRuntime;
  /** What callers enqueue (pipeline/pipeline.ts). */
  pipeline: Pipeline;
  /** Polls, sweeps and reconcile runs on the schedule queue. */
  schedules: Schedules;
  /** Stops an installation's schedules and open runs (disconnected, removed). */
  installationStop: InstallationStop;
  /** Admin commands on records, written to the CRM before they return. */
  records: RecordCommands;
  /** The score-change inbox the report webhook records `score.changed` events in. */
  inbox: ScoreChangeInbox;
  /** Report requests as stored (pending, resolved) and the service that makes them. */
  requests: RequestStore;
  reportRequests: ReportRequests;
  /** Who decided what about records' links (capped per installation). */
  decisions: DecisionLog;
  /** This process's change streams (held beside its workers), or null when none runs. */
  changeStreams(): ChangeStreams | null;
  /** Starts workers on their own blocking connection (and the change streams, where a provider has them). */
  startWorkers(concurrency?: {
    backfill?: number;
    realtime?: number;
    schedule?: number;
  }): Promise<PipelineWorkers>;
  close(): Promise<void>;
}

export interface ContextOptions {
  logger: Logger;
  metrics?: Metrics;
  matching?: MatchingStrategy;
}

export function createAppContext(config: Config, options: ContextOptions): AppContext {
  const { logger } = options;
  const metrics = options.metrics ?? new Metrics();
  const prefix = config.redisPrefix;
  const connections = openConnections(config);
  const { redis } = connections;
  const keys = new Keys(prefix);
  const box = new SecretBox(config.encryptionKey);
  const stores = createStores(connections, keys, {
    prefix,
    box,
    ...(config.reportCacheSeconds === undefined ? {} : { reportCacheSeconds: config.reportCacheSeconds }),
  });
  const { installations, runs, requests } = stores;
  const queues = openQueues(connections.queues, prefix, logger);
  const schedules = new Schedules(queues);
  const installationStop = new InstallationStop(schedules, runs);
  const tokens = createTokens(config, stores.provider, installations, installationStop, logger);
  const states = new OAuthStateStore(config.encryptionKey, {
    secureCookies: config.appUrl.startsWith('https:'),
  });
  const runtime = new AppRuntime(config, redis, keys, installations, tokens, stores.crmUsage, metrics);
  const pipeline = new Pipeline({
    ...pipelineStores(stores),
    redis,
    keys,
    queues,
    runtime,
    matching: options.matching ?? defaultMatching,
    logger,
    metrics,
    reconcilePeriodMs: config.reconcileHours * 3_600_000,
  });
  const records = new RecordCommands(pipeline, stores.undoReads);
  const reportRequests = new ReportRequests({
    store: requests,
    runtime,
    refresh: (installationId, recordIds) => records.refreshRecords(installationId, recordIds),
    logger,
  });

  const streams = new StreamHolder(config);
  const ctx: AppContext = {
    config,
    logger,
    metrics,
    redis,
    keys,
    stores,
    installations,
    tokens,
    states,
    index: stores.index,
    runs,
    queues,
    events: stores.events,
    runtime,
    pipeline,
    schedules,
    installationStop,
    records,
    inbox: stores.inbox,
    requests,
    reportRequests,
    decisions: stores.decisions,
    changeStreams: () => streams.current,
    ...workerLifecycle(config, pipeline, queues, connections, {
      start: () => streams.start(ctx),
      stop: () => streams.stop(),
    }),
  };
  return ctx;
}

/** The stores the pipeline's jobs work with. */
function pipelineStores(stores: Stores) {
  const { installations, index, runs, inbox, requests, alerts, decisions } = stores;
  const { pendingSlugs, unlisted, mergedInto, runLinks, latencies, reportReader, streamStates } = stores;
  const { slugChanges, recordLocks } = stores;
  return {
    installations,
    index,
    runs,
    inbox,
    requests,
    alerts,
    decisions,
    pendingSlugs,
    unlisted,
    mergedInto,
    runLinks,
    latencies,
    reportReader,
    slugChanges,
    recordLocks,
    streamStates,
  };
}

/**
 * The change streams of this process (app/change-streams.ts): started with its first workers when a provider has
 * its stream switched on, stopped before the workers close.
 */
class StreamHolder {
  current: ChangeStreams | null = null;

  constructor(private readonly config: Config) {}

  start(ctx: AppContext): void {
    if (this.current || !providers.some((p) => p.changeStream?.enabled(this.config))) return;
    this.current = new ChangeStreams(ctx);
    this.current.start();
  }

  async stop(): Promise<void> {
    await this.current?.stop();
    this.current = null;
  }
}

/** The process's Redis connections, each for a kind of caller that must not wait behind another's. */
interface Connections {
  /** Fail-fast connection for request handlers and producers. */
  redis: RedisClient;
  queues: RedisClient;
  ingest: RedisClient;
}

function openConnections(config: Config): Connections {
  const prefix = config.redisPrefix;
  const redis = createRedis(config, 'producer', `${prefix}-app`);
  // BullMQ's queues block on nothing, but a lost connection must not fail enqueues made while reconnecting
  // in workers; request handlers use `redis` above and fail fast instead.
  const queues = createRedis(config, 'worker', `${prefix}-queues`);
  // Acknowledging a score change is one script on a connection of its own: in `start` the workers' bursts of
  // index reads and writes on `redis` would otherwise queue ahead of it and hold up every acknowledgement. In a
  // storm many acknowledgements are due at once: the inbox sends those of one event-loop turn as one script call
  // (pipeline/score-changes/inbox-accept-batch.ts) when the turn's reads are done. No auto-pipelining: it would hold that call
  // back for one more turn, and with one call a turn it has nothing left to gather.
  const ingest = createRedis(config, 'producer', `${prefix}-ingest`);
  return { redis, queues, ingest };
}

function openQueues(connection: RedisClient, prefix: string, logger: Logger): Queues {
  const queues = new Queues(connection, prefix);
  for (const queue of queues.all()) {
    // Without a listener BullMQ prints every reconnect failure to the console, outside the JSON log.
    queue.on('error', (err) => logger.warn({ err, queue: queue.name }, 'queue connection error'));
  }
  return queues;
}

/** Workers started on connections of their own, and the close that ends them before the connections. */
function workerLifecycle(
  config: Config,
  pipeline: Pipeline,
  queues: Queues,
  connections: Connections,
  streams: { start(): void; stop(): Promise<void> },
): Pick<AppContext, 'startWorkers' | 'close'> {
  const prefix = config.redisPrefix;
  const workerSets: PipelineWorkers[] = [];
  const workerConnections: RedisClient[] = [];
  return {
    async startWorkers(concurrency) {
      const connection = createRedis(config, 'worker', `${prefix}-worker`);
      workerConnections.push(connection);
      const workers = new PipelineWorkers(pipeline, {
        connection,
        prefix,
        ...(concurrency ? { concurrency } : {}),
      });
      workerSets.push(workers);
      await workers.waitUntilReady();
      streams.start();
      return workers;
    },
    async close() {
      await streams.stop();
      await Promise.all(workerSets.map((w) => w.close()));
      await queues.close();
      await closeRedis(connections.redis, connections.queues, connections.ingest, ...workerConnections);
    },
  };
}

/** The token manager; an installation it finds disconnected loses its tokens, schedules and open runs. */
function createTokens(
  config: Config,
  storage: ProviderStorage,
  installations: InstallationStore,
  installationStop: InstallationStop,
  logger: Logger,
): TokenManager {
  return new TokenManager(installations, storage.redis, tokenRefreshers(config, storage), {
    onDisconnected: async (installationId, reason) => {
      logger.warn({ installationId, reason }, 'installation disconnected; its jobs stop');
      await installations.clearTokens(installationId);
      await installationStop.stop(installationId);
    },
  });
}

/** The token refresher of each CRM whose OAuth app is configured. */
function tokenRefreshers(config: Config, storage: ProviderStorage): Partial<Record<CrmKind, TokenRefresher>> {
  const out: Partial<Record<CrmKind, TokenRefresher>> = {};
  for (const provider of providers) {
    const refresher = provider.tokenRefresher(config, storage);
    if (refresher) out[kindOf(provider)] = refresher;
  }
  return out;
}
