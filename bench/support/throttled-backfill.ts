import { setTimeout as sleep } from 'node:timers/promises';
import { type LocalSystem, startLocalSystem } from '../../local/system.js';
import type { CrmKind } from '../../src/crm/connector.js';
import { identityOf, RedisRateGate, UNCAPPED_PER_MINUTE } from '../../src/ratelimit/redis-gate.js';
import { deleteKeysWithPrefix } from '../../src/redis.js';
import { loadFixtureReports, ROUTES } from '../../src/sandbox/index.js';
import { leastSeconds } from './backfill-report.js';
import { withExtraReports } from './fixture-reports.js';
import { benchPrefix } from './redis-keys.js';

/**
 * A backfill against upstreams that behave like the real ones under load (issue 13): the report sandbox
 * throttles each key per second (429 with `Retry-After`) and fails a share of calls with 503, the local CRM
 * keeps its own budget (HubSpot's 110 per 10 s). The connector paces itself to a per-minute rate above the
 * per-second throttle, as it does against a service that publishes no limits. Then a second full sync of the
 * unchanged CRM, started as soon as the first has ended. Everything is counted at the services: write calls
 * and their sizes at the CRM, answered report reads per slug at the sandbox.
 *
 * In-process (the local system), so that a test can run it too; the memory figures of bench/backfill.ts
 * need the child processes, these counts do not.
 */

export interface ThrottledOptions {
  crm: CrmKind;
  companies: number;
  /** The sandbox's throttle per key per second. */
  reportsPerSecond: number;
  /** Share of report-service calls answered 503. */
  failShare: number;
  /** Rate-limit headers the sandbox sends (none unless set, like the service). */
  rateHeaders?: 'ietf' | 'x-ratelimit';
  /** The connector's pace (REPORTS_RATE_PER_MINUTE), and the sandbox's per-minute limit. */
  reportsPerMinute: number;
  /** HubSpot's budget; Salesforce has no per-window budget. */
  crmRateLimit?: { max: number; intervalMs: number };
  /**
   * Salesforce only: share of records in a collection write answered UNABLE_TO_LOCK_ROW, what Salesforce
   * answers under concurrent load (the records are to be tried again).
   */
  lockRowShare?: number;
  /** Worker sets in the process (each with the default concurrency). */
  workers?: number;
  /** Generated reports besides the shipped fixtures (bench/support/fixture-reports.ts). */
  extraReports?: number;
  timeoutMs?: number;
  logLevel?: string;
}

export interface ThrottledFigures {
  crm: CrmKind;
  /** The CRM's record-write batch size (100 HubSpot, 200 Salesforce). */
  batchSize: number;
  /** Records per write call of the first sync, in order. */
  writeSizes: number[];
  /** Records the first sync wrote (each once or more). */
  recordsChanged: number;
  /** Records sent in all write calls (a record sent twice counts twice). */
  recordsSent: number;
  /** Salesforce Bulk API ingest jobs (a batch of 2,000 or more), not in `writeSizes`. */
  bulkJobs: number;
  /** Write calls per full batch: calls ÷ ceil(records changed ÷ batch size); NaN when bulk jobs wrote some. */
  writeCallsPerFullBatch: number;
  /** Answered report reads (200 or 404) of the first sync. */
  reads: number;
  distinctSlugsRead: number;
  readsPerSlug: number;
  /** The slug read most often, and how often. */
  mostReadSlug: { slug: string; reads: number } | null;
  /** Report reads that arrived and were not answered (429 or 503), and all report-service calls. */
  readAttemptsRefused: number;
  reportCalls: number;
  /** Report-service calls of the first sync answered 429, and 503. */
  reportLimited: number;
  reportFailed: number;
  /**
   * Report-service throughput against the tighter of its limits (the per-second throttle or the per-minute
   * limit): the least time those limits allow for the calls not answered 429, over the time from the first
   * to the last answer of the first sync. 1 is the most the service lets through.
   */
  reportsBoundSeconds: number;
  reportsSpanSeconds: number;
  shareOfLimit: number;
  /**
   * The report key's learnt rate per minute during the first sync, sampled every 250 ms: each change, with
   * the seconds since the first sample (the ceiling until the first 429).
   */
  rateSteps: { atSeconds: number; perMinute: number }[];
  firstSyncSeconds: number;
  runTotals: { written: number; failed: number };
  /** The second sync, started right after the first: write calls and records written. */
  secondSync: { writeCalls: number; recordsWritten: number; runWritten: number; writtenIds: string[] };
}

export const THROTTLED_DEFAULTS = {
  companies: 500,
  reportsPerSecond: 25,
  failShare: 0.02,
  reportsPerMinute: 3_000,
  extraReports: 5_000,
  lockRowShare: 0.05,
  workers: 1,
  hubspotRateLimit: { max: 110, intervalMs: 10_000 },
} as const;

export async function measureThrottledBackfill(options: ThrottledOptions): Promise<ThrottledFigures> {
  const timeoutMs = options.timeoutMs ?? 10 * 60_000;
  let system: LocalSystem | undefined;
  try {
    const started = Date.now();
    system = await startLocalSystem({
      crm: options.crm,
      companies: options.companies,
      prefix: benchPrefix(`throttled-${options.crm}`),
      workers: options.workers ?? THROTTLED_DEFAULTS.workers,
      fixtures: withExtraReports(
        loadFixtureReports(),
        options.extraReports ?? THROTTLED_DEFAULTS.extraReports,
      ),
      logLevel: options.logLevel ?? 'error',
      sandboxRateLimitPerMinute: options.reportsPerMinute,
      sandboxFaults: {
        ratePerSecond: options.reportsPerSecond,
        failShare: options.failShare,
        ...(options.rateHeaders ? { rateLimitHeaders: options.rateHeaders } : {}),
      },
      ...(options.crm === 'hubspot' && options.crmRateLimit ? { crmRateLimit: options.crmRateLimit } : {}),
    });
    const sys = system;
    if (sys.salesforce && options.lockRowShare)
      sys.salesforce.injectFaults({ lockRowShare: options.lockRowShare, seed: 13 });
    const [initial] = await sys.ctx.runs.recent(sys.installationId, 1);
    if (!initial) throw new Error('the installation started no initial sync');
    const sampler = sampleRate(sys);
    const first = await runAndSettle(sys, initial.id, timeoutMs);
    const rateSteps = await sampler.stop();
    const firstSyncSeconds = (Date.now() - started) / 1000;
    const writeSizes = writeCallSizes(sys);
    const bulkJobs = sys.salesforce?.counters()['bulk.createJob'] ?? 0;
    const changed = sys.recordIds.filter((id) => (sys.crm.record(id)?.syncedAt ?? null) !== null).length;
    const answered = sys.sandbox.answeredReads();
    const reportCalls = sys.sandbox.requestCount();
    const readArrivals = sys.sandbox.requestCount({ route: ROUTES.report });
    const answers = sys.sandbox.answerCounts();
    const reportLimited = answers.byStatus['429'] ?? 0;
    const admitted = sum(Object.values(answers.byStatus)) - reportLimited;
    const reportsBoundSeconds = Math.max(
      leastSeconds(admitted, options.reportsPerSecond, 1_000),
      leastSeconds(admitted, options.reportsPerMinute, 60_000),
    );
    const reportsSpanSeconds =
      answers.firstAt !== null && answers.lastAt !== null ? (answers.lastAt - answers.firstAt) / 1000 : 0;

    resetCounts(sys);
    const before = syncedAtOf(sys);
    const secondId = await sys.ctx.pipeline.startSync(sys.installationId, 'full');
    const second = await runAndSettle(sys, secondId, timeoutMs);
    const secondSizes = writeCallSizes(sys);

    const batchSize = options.crm === 'hubspot' ? 100 : 200;
    const recordsSent = sum(writeSizes);
    const reads = sum([...answered.values()]);
    const most = [...answered].sort((a, b) => b[1] - a[1])[0];
    return {
      crm: options.crm,
      batchSize,
      writeSizes,
      recordsChanged: changed,
      recordsSent,
      bulkJobs,
      writeCallsPerFullBatch:
        bulkJobs > 0 ? Number.NaN : writeSizes.length / Math.max(1, Math.ceil(changed / batchSize)),
      reads,
      distinctSlugsRead: answered.size,
      readsPerSlug: reads / Math.max(1, answered.size),
      mostReadSlug: most ? { slug: most[0], reads: most[1] } : null,
      readAttemptsRefused: readArrivals - reads,
      reportCalls,
      reportLimited,
      reportFailed: answers.byStatus['503'] ?? 0,
      reportsBoundSeconds,
      reportsSpanSeconds,
      shareOfLimit: reportsSpanSeconds > 0 ? reportsBoundSeconds / reportsSpanSeconds : Number.NaN,
      rateSteps,
      firstSyncSeconds,
      runTotals: { written: first.written, failed: first.failed },
      secondSync: {
        writeCalls: secondSizes.length,
        recordsWritten: sum(secondSizes),
        runWritten: second.written,
        writtenIds: changedSince(sys, before),
      },
    };
  } finally {
    if (system) {
      await system.close();
      await deleteKeysWithPrefix(system.ctx.config.redisUrl, system.ctx.config.redisPrefix);
    }
  }
}

/** Samples the report key's learnt rate (as the gate reads it) until stopped. */
function sampleRate(system: LocalSystem): {
  stop: () => Promise<{ atSeconds: number; perMinute: number }[]>;
} {
  const { config, redis, keys } = system.ctx;
  const gate = new RedisRateGate(redis, keys.reportsGate(identityOf(config.reports.apiKey ?? '')), {
    max: config.reportsRatePerMinute ?? UNCAPPED_PER_MINUTE,
    windowMs: 60_000,
    adaptive: {},
  });
  const steps: { atSeconds: number; perMinute: number }[] = [];
  const started = Date.now();
  let running = true;
  const loop = (async () => {
    while (running) {
      const { perMinute } = await gate.current();
      if (steps.at(-1)?.perMinute !== perMinute)
        steps.push({ atSeconds: (Date.now() - started) / 1000, perMinute });
      await sleep(250);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return steps;
    },
  };
}

/** Waits for the run to end and for the work queues to hold nothing (records handed back for a retry). */
async function runAndSettle(
  system: LocalSystem,
  runId: string,
  timeoutMs: number,
): Promise<{ written: number; failed: number }> {
  const deadline = Date.now() + timeoutMs;
  let quiet = 0;
  for (;;) {
    if (Date.now() > deadline) throw new Error(`run ${runId} did not settle in ${timeoutMs} ms`);
    const run = await system.ctx.runs.get(runId);
    const ended = run?.state === 'done' || run?.state === 'stopped';
    const counts = await system.ctx.queues.counts();
    const busy = [counts.backfill, counts.realtime].some((c) => c.waiting + c.active + c.delayed > 0);
    quiet = ended && !busy ? quiet + 1 : 0;
    if (quiet >= 3 && run) {
      if (run.state === 'stopped') throw new Error(`run ${runId} stopped: ${run.stoppedReason}`);
      return { written: run.totals.written, failed: run.totals.failed };
    }
    await sleep(200);
  }
}

function writeCallSizes(system: LocalSystem): number[] {
  return system.salesforce ? system.salesforce.collectionSizes() : system.hubspot.stats().batchSizes;
}

function syncedAtOf(system: LocalSystem): Map<string, string | null> {
  return new Map(system.recordIds.map((id) => [id, system.crm.record(id)?.syncedAt ?? null]));
}

/** Records whose `report_synced_at` moved since `before` (every connector write sets it). */
function changedSince(system: LocalSystem, before: Map<string, string | null>): string[] {
  return system.recordIds.filter((id) => (system.crm.record(id)?.syncedAt ?? null) !== before.get(id));
}

function resetCounts(system: LocalSystem): void {
  if (system.salesforce) system.salesforce.resetCounters();
  else system.hubspot.resetStats();
  system.sandbox.resetRequestCounts();
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

/** Sizes as the issue writes them: `100×6, 33, 32, 29×2`. */
export function sizesText(sizes: number[]): string {
  const runs: [number, number][] = [];
  for (const size of [...sizes].sort((a, b) => b - a)) {
    const last = runs.at(-1);
    if (last && last[0] === size) last[1] += 1;
    else runs.push([size, 1]);
  }
  return runs.map(([size, n]) => (n > 1 ? `${size}×${n}` : String(size))).join(', ');
}

/** The table: one column per CRM, and the target. */
export function throttledTable(figures: ThrottledFigures[]): string {
  const col = (f: ThrottledFigures): string[] => [
    `${f.writeSizes.length} (${sizesText(f.writeSizes) || 'none'})` +
      (f.bulkJobs > 0 ? ` and ${f.bulkJobs} bulk jobs` : '') +
      ` for ${f.recordsChanged} changed records` +
      (f.bulkJobs > 0 ? '' : `: ${f.writeCallsPerFullBatch.toFixed(2)} per full batch of ${f.batchSize}`),
    `${f.reads} for ${f.distinctSlugsRead} slugs (${f.readsPerSlug.toFixed(2)}); ` +
      `most read ${f.mostReadSlug?.reads ?? 0}×; ${f.readAttemptsRefused} attempts refused (429/503)`,
    `${f.secondSync.recordsWritten} records in ${f.secondSync.writeCalls} calls`,
    `${pct(f.reportLimited / Math.max(1, f.reportCalls))} (${f.reportLimited} of ${f.reportCalls}; ${f.reportFailed} answered 503)`,
    f.rateSteps.map((r) => `${r.atSeconds.toFixed(1)}: ${Math.round(r.perMinute)}`).join(', '),
    Number.isNaN(f.shareOfLimit)
      ? 'n/a'
      : `${pct(f.shareOfLimit)} (${f.reportsBoundSeconds.toFixed(1)} s allowed, ${f.reportsSpanSeconds.toFixed(1)} s taken)`,
    `${f.firstSyncSeconds.toFixed(1)} s`,
  ];
  const labels = [
    'CRM record-write calls for the changed records',
    'successful report reads (GET) per distinct slug read',
    'writes by a second sync with nothing changed, started right after the first',
    'report-service calls answered 429 (first sync)',
    "the key's rate per minute during the first sync (s: rate)",
    "report-service throughput as a share of the tighter limit's bound (first to last answer)",
    'first sync, start to settled',
  ];
  const targets = ['at most 1.02 per full batch', 'at most 1.02', '0', 'under 1%', '', 'at least 90%', ''];
  const cols = figures.map(col);
  const header = `| measure | ${figures.map((f) => (f.crm === 'hubspot' ? 'HubSpot' : 'Salesforce')).join(' | ')} | target |`;
  const rows = labels.map(
    (label, i) => `| ${label} | ${cols.map((c) => c[i]).join(' | ')} | ${targets[i]} |`,
  );
  return [header, `|---|${figures.map(() => '---|').join('')}---|`, ...rows].join('\n');
}

function pct(share: number): string {
  return `${(share * 100).toFixed(1)}%`;
}
