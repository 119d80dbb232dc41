/**
 * Backfill benchmark: the pipeline against a local HubSpot and the report sandbox, each with a rate limit,
 * then the same backfill done the naive way (one report call and one CRM write per record), side by side.
 *
 *   npm run bench:backfill -- [--records 10000] [--reports 5000] [--crm-scale 10] [--reports-per-minute 3000]
 *                             [--skip-naive | --naive] [--timeout-minutes 30] [--timeline] [--log-level error]
 *   npm run bench:backfill -- --throttled [--records 500] [--reports-per-second 25] [--fail-share 0.02]
 *                             [--rate-headers ietf|x-ratelimit] [--lock-share 0.05]
 *
 * `--throttled`: the same backfill on HubSpot and on Salesforce against throttling, failing upstreams (the
 * sandbox at a per-second limit with 429 + Retry-After and 2% 503, HubSpot at 110 per 10 s), then a second
 * sync of the unchanged CRM; prints write calls and sizes, reads per slug and the second sync's writes
 * (support/throttled-backfill.ts).
 *
 * (`npm run build && node dist/bench/backfill.js ...`: compiled, so that the connector's memory is not
 * inflated by a TypeScript loader.)
 *
 * This process only orchestrates: the services (sandbox, local HubSpot) and the connector each run in a child
 * process of their own, the connector afresh for each way of backfilling, so its memory is measured alone.
 * Tables go to stdout as markdown; progress to stderr. See docs/benchmarks.md.
 */
import { parseArgs } from 'node:util';
import { HUBSPOT_LIMITS, HUBSPOT_RATE_LIMITS } from '../connectors/hubspot/provider.js';
import { intOption } from '../src/cli/args.js';
import { UsageError } from '../src/cli/errors.js';
import type { CrmKind } from '../src/crm/connector.js';
import { crmKinds, isCrmKind } from '../src/providers.js';
import { REDIS_URL } from '../test/support/redis-url.js';
import type { BackfillConnectorProtocol } from './children/backfill-connector.js';
import type {
  BackfillServicesConfig,
  BackfillServicesProtocol,
  BackfillServicesReady,
} from './children/backfill-services.js';
import { backfillTable, backfillTargets, numbersOf, targetsTable } from './support/backfill-report.js';
import {
  type BackfillMeasurement,
  type BackfillWay,
  type BenchLimits,
  CONNECTOR_MODULE,
  type ConnectorSideConfig,
  SERVICES_MODULE,
} from './support/backfill-setup.js';
import { MAX_EXTRA_REPORTS } from './support/fixture-reports.js';
import { describeMachine } from './support/machine.js';
import { mb } from './support/measure.js';
import { benchPrefix, deleteKeys } from './support/redis-keys.js';
import { RpcChild } from './support/rpc.js';
import {
  measureThrottledBackfill,
  THROTTLED_DEFAULTS,
  type ThrottledFigures,
  throttledTable,
} from './support/throttled-backfill.js';

interface BackfillOptions {
  records: number;
  extraReports: number;
  crmScale: number;
  reportsPerMinute: number;
  timeoutMs: number;
  runNaive: boolean;
  logLevel: string;
  /** Print report-service calls per 5 s to stderr, to see where a run lost pace. */
  timeline: boolean;
  /** The throttled-upstreams mode instead (issue 13). */
  throttled: {
    reportsPerSecond: number;
    failShare: number;
    crms: CrmKind[];
    /** The sandbox sends rate-limit headers in this style (none by default, like the service). */
    rateHeaders?: 'ietf' | 'x-ratelimit';
    /** Share of records in a Salesforce write refused with UNABLE_TO_LOCK_ROW (the issue's own run had none). */
    lockShare: number;
  } | null;
}

function parseOptions(argv: string[]): BackfillOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      records: { type: 'string' },
      reports: { type: 'string' },
      'crm-scale': { type: 'string' },
      'reports-per-minute': { type: 'string' },
      'skip-naive': { type: 'boolean', default: false },
      naive: { type: 'boolean', default: false },
      'timeout-minutes': { type: 'string' },
      'log-level': { type: 'string', default: 'error' },
      timeline: { type: 'boolean', default: false },
      throttled: { type: 'boolean', default: false },
      'reports-per-second': { type: 'string' },
      'fail-share': { type: 'string' },
      crm: { type: 'string' },
      'rate-headers': { type: 'string' },
      'lock-share': { type: 'string' },
    },
  });
  const throttled = values.throttled ?? false;
  const records = intOption(
    'records',
    values.records,
    throttled ? THROTTLED_DEFAULTS.companies : 10_000,
    1,
    1_000_000,
  );
  const failShare = Number(values['fail-share'] ?? THROTTLED_DEFAULTS.failShare);
  if (!(failShare >= 0 && failShare < 1)) throw new UsageError('--fail-share must be from 0 to below 1');
  const lockShare = Number(values['lock-share'] ?? THROTTLED_DEFAULTS.lockRowShare);
  if (!(lockShare >= 0 && lockShare < 1)) throw new UsageError('--lock-share must be from 0 to below 1');
  return {
    records,
    extraReports: intOption('reports', values.reports, 5_000, 0, MAX_EXTRA_REPORTS),
    crmScale: intOption('crm-scale', values['crm-scale'], 10, 1, 1_000),
    reportsPerMinute: intOption('reports-per-minute', values['reports-per-minute'], 3_000, 1, 1_000_000),
    timeoutMs: intOption('timeout-minutes', values['timeout-minutes'], 30, 1, 24 * 60) * 60_000,
    // The naive loop at 100,000 records takes the better part of an hour; it runs there only when asked for.
    runNaive: values.naive || (!values['skip-naive'] && records <= 20_000),
    logLevel: values['log-level'] ?? 'error',
    timeline: values.timeline ?? false,
    throttled: throttled
      ? {
          reportsPerSecond: intOption(
            'reports-per-second',
            values['reports-per-second'],
            THROTTLED_DEFAULTS.reportsPerSecond,
            1,
            100_000,
          ),
          failShare,
          lockShare,
          crms: crmsOption(values.crm),
          ...rateHeadersOption(values['rate-headers']),
        }
      : null,
  };
}

function rateHeadersOption(value: string | undefined): { rateHeaders?: 'ietf' | 'x-ratelimit' } {
  if (value === undefined) return {};
  if (value === 'ietf' || value === 'x-ratelimit') return { rateHeaders: value };
  throw new UsageError('--rate-headers is ietf or x-ratelimit (none when left out)');
}

function crmsOption(value: string | undefined): CrmKind[] {
  if (value === undefined) return [...crmKinds];
  if (isCrmKind(value)) return [value];
  throw new UsageError('--crm is hubspot or salesforce (both when left out)');
}

const redisUrl = REDIS_URL;

function limitsFor(options: BackfillOptions): BenchLimits {
  return {
    crm: {
      max: HUBSPOT_RATE_LIMITS.publishedPerWindow * options.crmScale,
      intervalMs: HUBSPOT_RATE_LIMITS.windowMs,
    },
    crmGate: { max: HUBSPOT_LIMITS.requestsPerWindow * options.crmScale, windowMs: HUBSPOT_LIMITS.windowMs },
    reportsPerMinute: options.reportsPerMinute,
  };
}

const cleanups = new Set<() => Promise<void>>();
process.once('SIGINT', () => {
  process.stderr.write('\ninterrupted: stopping the services and deleting the run keys\n');
  void Promise.allSettled([...cleanups].map((c) => c())).finally(() => process.exit(130));
});

async function measure(way: BackfillWay, options: BackfillOptions): Promise<BackfillMeasurement> {
  const limits = limitsFor(options);
  const prefix = benchPrefix(`backfill-${way}`);
  const servicesConfig: BackfillServicesConfig = {
    records: options.records,
    extraReports: options.extraReports,
    crmLimit: limits.crm,
    reportsPerMinute: options.reportsPerMinute,
  };
  let services: RpcChild<BackfillServicesProtocol, BackfillServicesReady> | undefined;
  let connector: RpcChild<BackfillConnectorProtocol, null> | undefined;
  const cleanup = async () => {
    await connector?.stop();
    await services?.stop();
    await deleteKeys(redisUrl, prefix);
  };
  cleanups.add(cleanup);
  try {
    progress(`${way}: seeding ${options.records.toLocaleString('en-US')} companies in a fresh local CRM...`);
    services = await RpcChild.start<BackfillServicesProtocol, BackfillServicesReady>(
      SERVICES_MODULE,
      servicesConfig,
    );
    const connectorConfig: ConnectorSideConfig = {
      way,
      services: services.ready,
      redisUrl,
      prefix,
      limits,
      logLevel: options.logLevel,
      timeoutMs: options.timeoutMs,
    };
    connector = await RpcChild.start<BackfillConnectorProtocol, null>(CONNECTOR_MODULE, connectorConfig, {
      // For the live heap: a full collection forced every few seconds (bench/support/measure.ts).
      nodeFlags: ['--expose-gc'],
    });
    // Setting up (fields, installation) is not part of the backfill: counters start from here.
    await services.call('resetStats', null);
    progress(`${way}: backfilling (Redis prefix ${prefix})...`);
    const result = await connector.call('run', null, options.timeoutMs + 60_000);
    const m: BackfillMeasurement = {
      way,
      ...result,
      stats: await services.call('stats', null),
      verification: await services.call('verify', null),
    };
    progress(
      `${way}: ${m.records} records in ${(m.elapsedMs / 1000).toFixed(1)} s, peak RSS ${mb(m.memory.peakRss)}`,
    );
    if (options.timeline) progress(timelineText(m.stats.reports.timeline));
    return m;
  } finally {
    cleanups.delete(cleanup);
    await cleanup();
  }
}

/** Report-service answers per 5 s: accepted, then 429s in brackets when there were any. */
function timelineText(timeline: [number, number][]): string {
  const parts: string[] = [];
  for (let i = 0; i < timeline.length; i += 5) {
    const slice = timeline.slice(i, i + 5);
    const ok = slice.reduce((a, [n]) => a + n, 0);
    const limited = slice.reduce((a, [, n]) => a + n, 0);
    parts.push(`${i}s:${ok}${limited > 0 ? `[${limited}]` : ''}`);
  }
  return `report-service answers per 5 s: ${parts.join(' ')}`;
}

function progress(line: string): void {
  process.stderr.write(`${line}\n`);
}

try {
  const options = parseOptions(process.argv.slice(2));
  if (options.throttled) await throttledMode(options, options.throttled);
  else await rateLimitedMode(options);
} catch (err) {
  process.stderr.write(`bench:backfill failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = err instanceof UsageError ? 2 : 1;
}

async function throttledMode(
  options: BackfillOptions,
  throttle: NonNullable<BackfillOptions['throttled']>,
): Promise<void> {
  const machine = await describeMachine(redisUrl);
  const figures: ThrottledFigures[] = [];
  for (const crm of throttle.crms) {
    progress(`throttled: ${crm}, ${options.records} companies...`);
    const f = await measureThrottledBackfill({
      crm,
      companies: options.records,
      reportsPerSecond: throttle.reportsPerSecond,
      failShare: throttle.failShare,
      ...(throttle.rateHeaders ? { rateHeaders: throttle.rateHeaders } : {}),
      reportsPerMinute: options.reportsPerMinute,
      crmRateLimit: THROTTLED_DEFAULTS.hubspotRateLimit,
      extraReports: options.extraReports,
      lockRowShare: throttle.lockShare,
      timeoutMs: options.timeoutMs,
      logLevel: options.logLevel,
    });
    progress(`throttled: ${crm} done in ${f.firstSyncSeconds.toFixed(1)} s`);
    figures.push(f);
  }
  const out = [
    `Machine: ${machine}.`,
    '',
    `Throttled upstreams: report sandbox ${throttle.reportsPerSecond} calls per second per key (429 with ` +
      `Retry-After${throttle.rateHeaders ? `, ${throttle.rateHeaders} rate-limit headers` : ''}), ` +
      `${(throttle.failShare * 100).toFixed(1)}% answered 503, connector's ceiling ` +
      `${options.reportsPerMinute.toLocaleString('en-US')} per minute; local HubSpot at ` +
      `${THROTTLED_DEFAULTS.hubspotRateLimit.max} per ${THROTTLED_DEFAULTS.hubspotRateLimit.intervalMs / 1000} s; ` +
      `local Salesforce answering ${throttle.lockShare * 100}% of records in a write ` +
      'UNABLE_TO_LOCK_ROW (to be tried again). ' +
      `${options.records} companies. One run.`,
    '',
    throttledTable(figures),
  ];
  for (const f of figures) {
    if (f.secondSync.writtenIds.length > 0)
      out.push('', `Note (${f.crm}): the second sync wrote ${f.secondSync.writtenIds.join(', ')}`);
    if (f.runTotals.failed > 0) out.push('', `Note (${f.crm}): ${f.runTotals.failed} records failed`);
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

async function rateLimitedMode(options: BackfillOptions): Promise<void> {
  const { extraReports, crmScale, reportsPerMinute } = options;
  const limits = limitsFor(options);
  const machine = await describeMachine(redisUrl);
  const runs: BackfillMeasurement[] = [await measure('pipeline', options)];
  if (options.runNaive) runs.push(await measure('naive', options));
  const numbered = runs.map((m) => ({ m, n: numbersOf(m, limits) }));
  const pipeline = numbered[0]!;

  const out: string[] = [
    `Machine: ${machine}.`,
    '',
    `Limits: local CRM ${limits.crm.max.toLocaleString('en-US')} calls per ${limits.crm.intervalMs / 1000} s rolling ` +
      `(HubSpot's 110 × ${crmScale}), connector paced to ${limits.crmGate.max.toLocaleString('en-US')} per ` +
      `${limits.crmGate.windowMs / 1000} s; report sandbox ${reportsPerMinute.toLocaleString('en-US')} calls per ` +
      `minute per key (fixed windows), connector paced to the same. ${extraReports.toLocaleString('en-US')} ` +
      'generated reports besides the shipped fixtures. One run; medians are not meaningful for a single backfill.',
    '',
    backfillTable(numbered),
    '',
    targetsTable(backfillTargets(pipeline.n)),
  ];
  for (const { m } of numbered) {
    for (const note of m.notes) out.push('', `Note (${m.way}): ${note}`);
    for (const wrong of m.verification.wrongSamples) out.push('', `Wrong record (${m.way}): ${wrong}`);
  }
  process.stdout.write(`${out.join('\n')}\n`);
}
