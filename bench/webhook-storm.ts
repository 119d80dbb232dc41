/**
 * Webhook storm benchmark (issue 13): a report service that re-scores many reports at once sends thousands of
 * signed `score.changed` in seconds. Measured in one run, on one machine:
 *
 * 1. the reference: a minimal durable ingest (bench/children/reference-ingest.ts: node:http, signature check,
 *    one `SET NX` + `RPUSH` round trip) under the storm: events acknowledged per second and p99;
 * 2. the connector as `start` runs it (server and workers in one process, the report-service pace at its
 *    default) under the same storm, while single score changes on other linked reports arrive once a second
 *    (event to CRM *during* the storm);
 * 3. right after the storm, single changes `--interval` ms apart (event to CRM *after* the storm).
 *
 *   npm run bench:storm -- [--duration 20] [--connections 32] [--slugs 100] [--samples 50] [--interval 200]
 *                          [--companies 400] [--log-level error]
 *
 * Storm events are distinct (each its own id), signed beforehand, spread over `--slugs` linked reports.
 */
import { parseArgs } from 'node:util';
import { intOption } from '../src/cli/args.js';
import { UsageError } from '../src/cli/errors.js';
import { REDIS_URL } from '../test/support/redis-url.js';
import type {
  ReferenceIngestConfig,
  ReferenceIngestProtocol,
  ReferenceIngestReady,
} from './children/reference-ingest.js';
import type {
  EventToCrmResult,
  WebhookSystemConfig,
  WebhookSystemProtocol,
  WebhookSystemReady,
} from './children/webhook-system.js';
import { describeMachine } from './support/machine.js';
import { fixed, markdownTable, median, percentile } from './support/measure.js';
import { benchPrefix, deleteKeys } from './support/redis-keys.js';
import { RpcChild, siblingModule } from './support/rpc.js';
import { type LoadResult, postSignedLoad, signedPool } from './support/signed-load.js';

const SYSTEM_MODULE = siblingModule(import.meta.url, './children/webhook-system');
const REFERENCE_MODULE = siblingModule(import.meta.url, './children/reference-ingest');
/** Signed requests made per second of storm: more than either server acknowledges, so none repeats. */
const POOL_PER_SECOND = 25_000;
const TARGETS = { ingestRatio: 0.6, p99Ratio: 2, afterP95Ms: 3_000 };
/** The sandbox is generous: the storm measures the connector, not a throttled service. */
const SANDBOX_PER_MINUTE = 120_000;

interface StormOptions {
  durationS: number;
  connections: number;
  slugs: number;
  samples: number;
  intervalMs: number;
  companies: number;
  logLevel: string;
}

function parseOptions(argv: string[]): StormOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string' },
      connections: { type: 'string' },
      slugs: { type: 'string' },
      samples: { type: 'string' },
      interval: { type: 'string' },
      companies: { type: 'string' },
      'log-level': { type: 'string', default: 'error' },
    },
  });
  return {
    durationS: intOption('duration', values.duration, 20, 1, 300),
    connections: intOption('connections', values.connections, 32, 1, 1_000),
    slugs: intOption('slugs', values.slugs, 100, 1, 10_000),
    samples: intOption('samples', values.samples, 50, 1, 10_000),
    intervalMs: intOption('interval', values.interval, 200, 10, 60_000),
    companies: intOption('companies', values.companies, 400, 10, 100_000),
    logLevel: values['log-level'] ?? 'error',
  };
}

type Storm = LoadResult;

function progress(line: string): void {
  process.stderr.write(`${line}\n`);
}

function tripRow(label: string, trip: EventToCrmResult): string[] {
  return [
    label,
    String(trip.latenciesMs.length),
    `${fixed(median(trip.latenciesMs), 0)} ms`,
    `${fixed(percentile(trip.latenciesMs, 95), 0)} ms`,
    `${fixed(trip.latenciesMs.length > 0 ? Math.max(...trip.latenciesMs) : Number.NaN, 0)} ms`,
    String(trip.missed),
  ];
}

async function main(): Promise<void> {
  const o = parseOptions(process.argv.slice(2));
  const redisUrl = REDIS_URL;
  const prefix = benchPrefix('storm');
  const machine = await describeMachine(redisUrl);
  let system: RpcChild<WebhookSystemProtocol, WebhookSystemReady> | undefined;
  let reference: RpcChild<ReferenceIngestProtocol, ReferenceIngestReady> | undefined;
  const cleanup = async () => {
    await reference?.stop();
    await system?.stop();
    await deleteKeys(redisUrl, prefix);
  };
  process.once('SIGINT', () => void cleanup().finally(() => process.exit(130)));
  try {
    progress(`starting a local system with ${o.companies} companies and waiting for its first backfill...`);
    const systemConfig: WebhookSystemConfig = {
      companies: o.companies,
      prefix,
      redisUrl,
      workers: 1,
      logLevel: o.logLevel,
      timeoutMs: 300_000,
      connectorRatePerMinute: null,
      sandboxRatePerMinute: SANDBOX_PER_MINUTE,
    };
    system = await RpcChild.start(SYSTEM_MODULE, systemConfig, { timeoutMs: 360_000 });
    const referenceConfig: ReferenceIngestConfig = { redisUrl, prefix, secret: system.ready.secret };
    reference = await RpcChild.start(REFERENCE_MODULE, referenceConfig);

    const linked = system.ready.linked.map((l) => l.slug);
    const stormSlugs = linked.slice(0, Math.min(o.slugs, Math.max(1, linked.length - 10)));
    const singleSlugs = linked.filter((s) => !stormSlugs.includes(s));
    if (singleSlugs.length === 0)
      throw new Error('no linked report is left outside the storm: raise --companies');

    const referenceStorm = async (tag: string) => {
      progress(
        `reference ingest: ${o.durationS} s, ${o.connections} connections, ${stormSlugs.length} slugs`,
      );
      return postSignedLoad(
        reference!.ready.url,
        signedPool(system!.ready.secret, stormSlugs, o.durationS * POOL_PER_SECOND, tag),
        o.connections,
        o.durationS,
      );
    };
    const refBefore = await referenceStorm('storm_ref1');

    progress(`connector: the same storm, with one single change a second on other reports`);
    const before = await system.call('work', null);
    const during = system.call(
      'changesApart',
      { samples: o.durationS, intervalMs: 1_000, slugs: singleSlugs, perSampleTimeoutMs: 60_000 },
      (o.durationS + 70) * 1_000,
    );
    const mine = await postSignedLoad(
      `${system.ready.appUrl}/webhooks/reports`,
      signedPool(system.ready.secret, stormSlugs, o.durationS * POOL_PER_SECOND, 'storm_app'),
      o.connections,
      o.durationS,
    );
    const afterStormWork = await system.call('work', null);
    const backlog = await system.call('backlog', null);
    progress(`backlog when the storm ended: ${JSON.stringify(backlog)}`);
    for (const slug of singleSlugs.slice(-3)) {
      progress(`trace of one change: ${JSON.stringify(await system.call('trace', { slug }, 40_000))}`);
    }
    progress(`after the storm: ${o.samples} single changes ${o.intervalMs} ms apart`);
    const after = await system.call(
      'changesApart',
      { samples: o.samples, intervalMs: o.intervalMs, slugs: singleSlugs, perSampleTimeoutMs: 60_000 },
      (o.samples * o.intervalMs) / 1000 + 120_000,
    );
    const duringTrip = await during;
    const { waitedMs } = await system.call('drain', { timeoutMs: 300_000 }, 310_000);
    const end = await system.call('work', null);
    const outcomes = await system.call('outcomes', null);
    // The reference again, once the connector is idle: the machine is shared, so its load moves between runs.
    const refAfter = await referenceStorm('storm_ref2');
    const ref: Storm = {
      ackedPerSecond: (refBefore.ackedPerSecond + refAfter.ackedPerSecond) / 2,
      p50Ms: (refBefore.p50Ms + refAfter.p50Ms) / 2,
      p99Ms: (refBefore.p99Ms + refAfter.p99Ms) / 2,
      non2xx: refBefore.non2xx + refAfter.non2xx,
      errors: refBefore.errors + refAfter.errors,
      sent: refBefore.sent + refAfter.sent,
    };
    const row = (label: string, r: Storm) => [
      label,
      fixed(r.ackedPerSecond, 0),
      `${fixed(r.p50Ms, 1)} ms`,
      `${fixed(r.p99Ms, 1)} ms`,
      String(r.non2xx),
      String(r.errors),
    ];

    const ingestRatio = mine.ackedPerSecond / ref.ackedPerSecond;
    const p99Ratio = mine.p99Ms / ref.p99Ms;
    const afterP95 = percentile(after.latenciesMs, 95);
    const out = [
      `Machine: ${machine}.`,
      '',
      `Storm: autocannon, ${o.connections} connections for ${o.durationS} s, distinct signed score.changed events on ` +
        `${stormSlugs.length} linked reports. The connector runs as \`start\` does (server and workers in one ` +
        'process, default REPORTS_RATE_PER_MINUTE) against a generous sandbox and local HubSpot. Single changes are ' +
        `made in the sandbox on ${singleSlugs.length} other linked reports and timed until the CRM record shows them.`,
      '',
      markdownTable(
        ['ingest', 'acknowledged events/s', 'p50', 'p99', 'non-2xx', 'socket errors'],
        [
          row("reference, before the connector's storm", refBefore),
          row('reference, after it', refAfter),
          row('reference, mean of the two (node:http, verify, SET NX + RPUSH)', ref),
          row('connector `POST /webhooks/reports`', mine),
          [
            '**ratio** (connector / reference)',
            `**${fixed(ingestRatio, 2)}**`,
            '',
            `**${fixed(p99Ratio, 2)}×**`,
            '',
            '',
          ],
        ],
      ),
      '',
      markdownTable(
        ['score change to CRM record', 'samples', 'p50', 'p95', 'max', 'missed (> 60 s)'],
        [
          tripRow('during the storm (one a second, other reports)', duringTrip),
          tripRow(`after the storm (${o.intervalMs} ms apart)`, after),
        ],
      ),
      '',
      `Work: ${outcomes.accepted ?? 0} events accepted in all; report-service requests during the storm ` +
        `${afterStormWork.reportRequests - before.reportRequests}, CRM write calls ${afterStormWork.crmWriteCalls - before.crmWriteCalls}; ` +
        `until the queue was empty ${end.reportRequests - before.reportRequests} and ${end.crmWriteCalls - before.crmWriteCalls}; ` +
        `queue empty ${fixed(waitedMs / 1000, 1)} s after the last change.`,
      '',
      markdownTable(
        ['target', 'this run', 'met'],
        [
          [
            `ingest ≥ ${TARGETS.ingestRatio} of the reference`,
            fixed(ingestRatio, 2),
            ingestRatio >= TARGETS.ingestRatio ? 'yes' : '**no**',
          ],
          [
            `p99 ≤ ${TARGETS.p99Ratio}× the reference`,
            `${fixed(p99Ratio, 2)}×`,
            p99Ratio <= TARGETS.p99Ratio ? 'yes' : '**no**',
          ],
          [
            `after the storm, event to CRM p95 < ${TARGETS.afterP95Ms / 1000} s`,
            `${fixed(afterP95, 0)} ms`,
            afterP95 < TARGETS.afterP95Ms && after.missed === 0 ? 'yes' : '**no**',
          ],
        ],
      ),
    ];
    process.stdout.write(`${out.join('\n')}\n`);
  } finally {
    await cleanup();
  }
}

try {
  await main();
} catch (err) {
  process.stderr.write(`bench:storm failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = err instanceof UsageError ? 2 : 1;
}
