import { setTimeout as sleep } from 'node:timers/promises';
import { type LocalSystem, startLocalSystem, workerEnvFor } from '../../local/system.js';
import { InstallationService } from '../../src/app/installation-service.js';
import { main } from '../../src/cli/main.js';
import type { CrmKind } from '../../src/crm/connector.js';
import { loadFixtureReports } from '../../src/sandbox/index.js';
import type { RunSummary } from '../../src/storage/runs.js';
import { withExtraReports } from './fixture-reports.js';

/**
 * The operator's day as the issue tells it (issue 30): the app installed (its first sync starts), the daily
 * reconcile due at start-up (BullMQ runs an `every` job at once), and `report-connector sync --wait` typed a
 * few seconds later. Each action goes through the code an operator reaches: the installation service, the
 * schedule the `start` command sets, and the CLI's own `main`, so whatever those do about a run under way
 * (join, skip, supersede) is what is measured.
 */

export interface OperatorDayOptions {
  crm: CrmKind;
  companies: number;
  redisUrl: string;
  /** Nodes of a Redis Cluster (`host:port,…`) instead of `redisUrl`. */
  clusterNodes?: string;
  prefix: string;
  /** In-process worker sets (0 when worker processes are started by the caller). */
  workers: number;
  /** The sandbox's per-key throttle (429 + Retry-After) and 503 share. */
  reportsPerSecond: number;
  failShare: number;
  /** The sandbox's per-minute limit (the connector is given no REPORTS_RATE_PER_MINUTE). */
  reportsPerMinute: number;
  extraReports: number;
  /** Salesforce: share of records in a write refused UNABLE_TO_LOCK_ROW. */
  lockRowShare: number;
  env?: Record<string, string>;
  logLevel: string;
}

export const OPERATOR_DAY_DEFAULTS = {
  companies: 500,
  reportsPerSecond: 25,
  failShare: 0.02,
  reportsPerMinute: 3_000,
  extraReports: 5_000,
  hubspotRateLimit: { max: 110, intervalMs: 10_000 },
  /** When `sync --wait` is typed, after the install. */
  syncAfterMs: 3_000,
  reconcileEveryMs: 24 * 3_600_000,
} as const;

export async function startOperatorSystem(options: OperatorDayOptions): Promise<LocalSystem> {
  const system = await startLocalSystem({
    crm: options.crm,
    companies: options.companies,
    prefix: options.prefix,
    redisUrl: options.redisUrl,
    workers: options.workers,
    firstSync: false,
    fixtures: withExtraReports(loadFixtureReports(), options.extraReports),
    logLevel: options.logLevel,
    sandboxRateLimitPerMinute: options.reportsPerMinute,
    // As an operator who does not know the key's limit: no REPORTS_RATE_PER_MINUTE, the rate is learnt.
    connectorRatePerMinute: null,
    sandboxFaults: { ratePerSecond: options.reportsPerSecond, failShare: options.failShare },
    ...(options.crm === 'hubspot' ? { crmRateLimit: OPERATOR_DAY_DEFAULTS.hubspotRateLimit } : {}),
    env: {
      ...(options.clusterNodes ? { REDIS_CLUSTER_NODES: options.clusterNodes } : {}),
      ...options.env,
    },
  });
  if (system.salesforce && options.lockRowShare > 0)
    system.salesforce.injectFaults({ lockRowShare: options.lockRowShare, seed: 30 });
  // The sandbox's own deliveries would be a second sender of events the bench sends itself.
  system.sandbox.configureWebhook(undefined, undefined);
  resetUpstreamCounts(system);
  return system;
}

/** What the CLI's `sync` printed and returned, and when it ended. */
export interface CliSync {
  code: number;
  endedAt: number;
  stderr: string;
}

export interface OperatorDay {
  startedAt: number;
  /** Ends when `sync --wait` returns. */
  cliSync: Promise<CliSync>;
}

/**
 * Install (first sync), reconcile due at start-up, `sync --wait` `syncAfterMs` later; `alone`: the install's
 * first sync only, to tell what one run does from what runs at once do.
 */
export async function operatorDay(
  system: LocalSystem,
  syncAfterMs: number,
  alone = false,
): Promise<OperatorDay> {
  const installation = await system.ctx.installations.get(system.installationId);
  if (!installation) throw new Error('the local installation is missing');
  const startedAt = Date.now();
  await new InstallationService(system.ctx).installed(installation);
  if (alone) return { startedAt, cliSync: Promise.resolve({ code: 0, endedAt: startedAt, stderr: '' }) };
  await system.ctx.schedules.scheduleReconcile(OPERATOR_DAY_DEFAULTS.reconcileEveryMs);
  const cliSync = (async () => {
    await sleep(Math.max(0, startedAt + syncAfterMs - Date.now()));
    return cli(system, ['sync', '--wait']);
  })();
  // An early failure must not go unhandled while the caller is still waiting for something else.
  cliSync.catch(() => {});
  return { startedAt, cliSync };
}

/** `report-connector <argv>` in this process, with the environment a separate process would have. */
export async function cli(system: LocalSystem, argv: string[]): Promise<CliSync> {
  const stderr: string[] = [];
  const code = await main(argv, {
    out: () => {},
    err: (t) => stderr.push(t),
    env: { ...workerEnvFor(system), LOG_LEVEL: 'silent' },
    isTTY: false,
    untilStopped: () => Promise.resolve(),
  });
  return { code, endedAt: Date.now(), stderr: stderr.join('\n') };
}

/** Runs of the installation started at or after `since`, oldest first. */
export async function runsSince(system: LocalSystem, since: number): Promise<RunSummary[]> {
  const recent = await system.ctx.runs.recent(system.installationId, 20);
  return recent.filter((r) => Date.parse(r.startedAt) >= since - 1_000).reverse();
}

/**
 * Waits until every run started since `since` has ended and the work queues have been empty for a second
 * (records handed back for a retry, slug updates); with `runsOnly`, until the runs have ended (events keep
 * the queues busy). Errors reading Redis (a restart) count as "not yet".
 */
export async function settle(
  system: LocalSystem,
  since: number,
  timeoutMs: number,
  options: { runsOnly?: boolean } = {},
): Promise<{ runs: RunSummary[]; settledAt: number }> {
  const deadline = Date.now() + timeoutMs;
  let quiet = 0;
  let lastEndAt = 0;
  for (;;) {
    if (Date.now() > deadline) throw new Error(`the runs did not settle within ${timeoutMs} ms`);
    try {
      const runs = await runsSince(system, since);
      const ended = runs.length > 0 && runs.every((r) => r.state === 'done' || r.state === 'stopped');
      if (ended && options.runsOnly) {
        const last = Math.max(...runs.map((r) => Date.parse(r.finishedAt ?? r.startedAt)));
        return { runs, settledAt: last };
      }
      const counts = await system.ctx.queues.counts();
      const busy = [counts.backfill, counts.realtime].some((c) => c.waiting + c.active + c.delayed > 0);
      if (ended && !busy) {
        if (quiet === 0) lastEndAt = Date.now();
        quiet += 1;
      } else quiet = 0;
      if (quiet >= 5) return { runs, settledAt: lastEndAt };
    } catch {
      quiet = 0;
    }
    await sleep(200);
  }
}

export function resetUpstreamCounts(system: LocalSystem): void {
  if (system.salesforce) system.salesforce.resetCounters();
  else system.hubspot.resetStats();
  system.sandbox.resetRequestCounts();
}

/** Records per CRM write call so far (collections on Salesforce, batch updates on HubSpot). */
export function writeCallSizes(system: LocalSystem): number[] {
  return system.salesforce ? system.salesforce.collectionSizes() : system.hubspot.stats().batchSizes;
}

/** Salesforce Bulk API ingest jobs so far (each one write, whatever its size). */
export function bulkJobs(system: LocalSystem): number {
  return system.salesforce?.counters()['bulk.createJob'] ?? 0;
}

/** Polls the CRM's write counters: the time of the first write call after `since`. */
export function firstWriteWatch(system: LocalSystem, since: number): { stop: () => number | null } {
  let at: number | null = null;
  const timer = setInterval(() => {
    if (at === null && (writeCallSizes(system).length > 0 || bulkJobs(system) > 0)) at = Date.now() - since;
  }, 50);
  return {
    stop: () => {
      clearInterval(timer);
      return at;
    },
  };
}
