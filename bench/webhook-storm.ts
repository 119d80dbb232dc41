/**
 * Webhook storm benchmark (issues 13, 30): a report service that re-scores many reports at once sends thousands
 * of signed `score.changed` in seconds. Measured in one run, on one machine, against the connector as operators
 * run it, in OS processes of its own (the compiled CLI):
 *
 * - `start`: `report-connector start`;
 * - `serve`: `report-connector serve` beside one `report-connector worker`.
 *
 * For each mode, `--runs` (3) rounds, each the reference then the connector, alternating (R C R C R C), so both
 * meet the same load on a shared machine:
 * 1. the reference: a minimal durable ingest (bench/children/reference-ingest.ts: node:http, signature check,
 *    one `SET NX` + `RPUSH` round trip) under the storm: events acknowledged per second and p99;
 * 2. the connector under the same storm, while single score changes on other linked reports arrive once a
 *    second (event to CRM *during* the storm);
 * 3. right after the storm, single changes `--interval` ms apart (event to CRM *after* the storm), then the
 *    connector's queue is drained before the next round.
 * Each round's ratios (connector / the reference of its round) are printed with the load average at its start
 * and end; the result is the median of the rounds' ratios.
 *
 *   npm run bench:storm -- [--mode start|serve|both] [--runs 3] [--duration 20] [--connections 32]
 *                          [--slugs 100] [--samples 50] [--interval 200] [--companies 400] [--cluster]
 *                          [--cpu-prof DIR] [--cli PATH] [--log-level error]
 *
 * Storm events are distinct (each its own id), signed beforehand, spread over `--slugs` linked reports. The
 * sandbox, the local HubSpot and the event-to-CRM probes live in one child process (bench/children/
 * webhook-system.ts), the reference in another, the load generator in this one.
 *
 * `--cluster` runs the connector on a local three-master Redis Cluster (test/support/redis-cluster.ts, started
 * and stopped here); the reference stays on the one Redis at REDIS_URL: it is the floor of a durable ingest on
 * one Redis. `--cpu-prof DIR` runs the connector's processes with `node --cpu-prof` (profiles written to DIR
 * when they stop). `--cli PATH` runs another compiled `bin.js` as the connector (say, main's build copied
 * under test-artifacts/, for a before and after measured the same way).
 */
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { intOption } from '../src/cli/args.js';
import { UsageError } from '../src/cli/errors.js';
import { LocalRedisCluster } from '../test/support/redis-cluster.js';
import { REDIS_URL } from '../test/support/redis-url.js';
import type {
  ReferenceIngestConfig,
  ReferenceIngestProtocol,
  ReferenceIngestReady,
} from './children/reference-ingest.js';
import type {
  ConnectorMode,
  EventToCrmResult,
  WebhookSystemConfig,
  WebhookSystemProtocol,
  WebhookSystemReady,
} from './children/webhook-system.js';
import { describeMachine } from './support/machine.js';
import { fixed, markdownTable, median, percentile } from './support/measure.js';
import { benchPrefix, deleteKeys } from './support/redis-keys.js';
import { RpcChild, siblingModule } from './support/rpc.js';
import { type LoadResult, postSignedLoad, type SignedRequest, signedPool } from './support/signed-load.js';

const SYSTEM_MODULE = siblingModule(import.meta.url, './children/webhook-system');
const REFERENCE_MODULE = siblingModule(import.meta.url, './children/reference-ingest');
/** Signed requests made per second of storm: more than either server acknowledges, so none repeats. */
const POOL_PER_SECOND = 25_000;
const TARGETS = { ingestRatio: 0.6, p99Ratio: 2, afterP95Ms: 1_000 };
/** The sandbox is generous: the storm measures the connector, not a throttled service. */
const SANDBOX_PER_MINUTE = 120_000;

interface StormOptions {
  modes: ConnectorMode[];
  runs: number;
  durationS: number;
  connections: number;
  slugs: number;
  samples: number;
  intervalMs: number;
  companies: number;
  logLevel: string;
  cluster: boolean;
  cpuProfDir: string | undefined;
  /** Another compiled CLI to run as the connector (an earlier build, for a before/after in the same way). */
  cli: string | undefined;
}

function parseOptions(argv: string[]): StormOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      mode: { type: 'string', default: 'both' },
      runs: { type: 'string' },
      duration: { type: 'string' },
      connections: { type: 'string' },
      slugs: { type: 'string' },
      samples: { type: 'string' },
      interval: { type: 'string' },
      companies: { type: 'string' },
      'log-level': { type: 'string', default: 'error' },
      cluster: { type: 'boolean', default: false },
      'cpu-prof': { type: 'string' },
      cli: { type: 'string' },
    },
  });
  const mode = values.mode ?? 'both';
  if (mode !== 'start' && mode !== 'serve' && mode !== 'both')
    throw new UsageError('--mode is start, serve or both');
  return {
    modes: mode === 'both' ? ['start', 'serve'] : [mode],
    runs: intOption('runs', values.runs, 3, 1, 20),
    durationS: intOption('duration', values.duration, 20, 1, 300),
    connections: intOption('connections', values.connections, 32, 1, 1_000),
    slugs: intOption('slugs', values.slugs, 100, 1, 10_000),
    samples: intOption('samples', values.samples, 50, 1, 10_000),
    intervalMs: intOption('interval', values.interval, 200, 10, 60_000),
    companies: intOption('companies', values.companies, 400, 10, 100_000),
    logLevel: values['log-level'] ?? 'error',
    cluster: values.cluster ?? false,
    cpuProfDir: values['cpu-prof'] ? resolve(values['cpu-prof']) : undefined,
    cli: values.cli ? resolve(values.cli) : undefined,
  };
}

function progress(line: string): void {
  process.stderr.write(`${line}\n`);
}

function load(): string {
  return loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
}

/** One storm on one server, with the load average when it began and ended. */
interface Storm extends LoadResult {
  loadStart: string;
  loadEnd: string;
}

/** One round: the reference, then the connector, then the connector's single changes after its storm. */
interface Round {
  ref: Storm;
  mine: Storm;
  /** CPU microseconds per acknowledged event: the reference's process, the connector's server, its workers. */
  refCpuUs: number;
  serverCpuUs: number;
  workersCpuUs: number;
  during: EventToCrmResult;
  after: EventToCrmResult;
  /** From the end of the after-storm changes until the connector's queue was empty. */
  drainedMs: number;
}

interface ModeResult {
  mode: ConnectorMode;
  rounds: Round[];
}

/** Stops what the run under way started; set while one is, so Ctrl-C can stop it. */
let stopCurrent: (() => Promise<void>) | undefined;

async function timedStorm(url: string, pool: SignedRequest[], o: StormOptions): Promise<Storm> {
  const loadStart = load();
  const result = await postSignedLoad(url, pool, o.connections, o.durationS);
  return { ...result, loadStart, loadEnd: load() };
}

async function runModes(o: StormOptions, clusterNodes: string | null): Promise<ModeResult[]> {
  const redisUrl = REDIS_URL;
  const prefix = benchPrefix('storm');
  const referencePrefix = benchPrefix('storm-ref');
  let system: RpcChild<WebhookSystemProtocol, WebhookSystemReady> | undefined;
  let reference: RpcChild<ReferenceIngestProtocol, ReferenceIngestReady> | undefined;
  const cleanup = async () => {
    await reference?.stop();
    await system?.stop();
    await deleteKeys(redisUrl, prefix);
    await deleteKeys(redisUrl, referencePrefix);
  };
  stopCurrent = cleanup;
  try {
    progress(`starting a local system with ${o.companies} companies and waiting for its first backfill...`);
    const systemConfig: WebhookSystemConfig = {
      companies: o.companies,
      prefix,
      redisUrl,
      workers: 1,
      logLevel: o.logLevel,
      timeoutMs: 600_000,
      connectorRatePerMinute: null,
      sandboxRatePerMinute: SANDBOX_PER_MINUTE,
      clusterNodes,
    };
    system = await RpcChild.start(SYSTEM_MODULE, systemConfig, { timeoutMs: 660_000 });
    const { secret } = system.ready;
    const referenceConfig: ReferenceIngestConfig = { redisUrl, prefix: referencePrefix, secret };
    reference = await RpcChild.start(REFERENCE_MODULE, referenceConfig);

    const linked = system.ready.linked.map((l) => l.slug);
    const stormSlugs = linked.slice(0, Math.min(o.slugs, Math.max(1, linked.length - 10)));
    const singleSlugs = linked.filter((s) => !stormSlugs.includes(s));
    if (singleSlugs.length === 0)
      throw new Error('no linked report is left outside the storm: raise --companies');

    const results: ModeResult[] = [];
    for (const mode of o.modes) {
      progress(`launching the connector: ${mode === 'start' ? '`start`' : '`serve` + `worker`'}`);
      const { appUrl } = await system.call(
        'launch',
        { mode, ...(o.cpuProfDir ? { cpuProfDir: o.cpuProfDir } : {}), ...(o.cli ? { cli: o.cli } : {}) },
        90_000,
      );
      // A start-up reconcile (BullMQ runs an `every` job at once) is done before the first round.
      await system.call('drain', { timeoutMs: 300_000, settle: true }, 310_000);
      const rounds: Round[] = [];
      for (let i = 1; i <= o.runs; i++) {
        progress(`${mode}, round ${i}/${o.runs}: reference storm (load ${load()})`);
        const pool = (tag: string) => signedPool(secret, stormSlugs, o.durationS * POOL_PER_SECOND, tag);
        const refPool = pool(`ref_${mode}_${i}`);
        const refCpu0 = await reference.call('cpu', null);
        const ref = await timedStorm(reference.ready.url, refPool, o);
        const refCpu1 = await reference.call('cpu', null);
        // Signed before the single changes begin, so that they all fall within the storm.
        const minePool = pool(`app_${mode}_${i}`);
        progress(`${mode}, round ${i}/${o.runs}: connector storm (load ${load()})`);
        const during = system.call(
          'changesApart',
          { samples: o.durationS, intervalMs: 1_000, slugs: singleSlugs, perSampleTimeoutMs: 60_000 },
          (o.durationS + 70) * 1_000,
        );
        const cpu0 = await system.call('cpu', null);
        const mine = await timedStorm(`${appUrl}/webhooks/reports`, minePool, o);
        const cpu1 = await system.call('cpu', null);
        progress(`backlog when the storm ended: ${JSON.stringify(await system.call('backlog', null))}`);
        const after = await system.call(
          'changesApart',
          { samples: o.samples, intervalMs: o.intervalMs, slugs: singleSlugs, perSampleTimeoutMs: 60_000 },
          (o.samples * o.intervalMs) / 1000 + 120_000,
        );
        const duringTrip = await during;
        // The next reference storm starts on an idle connector: its storm's hot reports updated, nothing queued.
        const { waitedMs } = await system.call('drain', { timeoutMs: 300_000, settle: true }, 310_000);
        const perEvent = (seconds: number, storm: Storm) =>
          (seconds * 1e6) / Math.max(1, storm.ackedPerSecond * o.durationS);
        const round: Round = {
          ref,
          mine,
          refCpuUs: perEvent(refCpu1.seconds - refCpu0.seconds, ref),
          serverCpuUs: perEvent(cpu1.server - cpu0.server, mine),
          workersCpuUs: perEvent(cpu1.others - cpu0.others, mine),
          during: duringTrip,
          after,
          drainedMs: waitedMs,
        };
        rounds.push(round);
        progress(
          `  ingest ${fixed(mine.ackedPerSecond / ref.ackedPerSecond, 2)}, p99 ${fixed(mine.p99Ms / ref.p99Ms, 2)}×, ` +
            `CPU µs per event: reference ${fixed(round.refCpuUs, 0)}, server ${fixed(round.serverCpuUs, 0)}, ` +
            `workers ${fixed(round.workersCpuUs, 0)}`,
        );
      }
      await system.call('halt', null, 60_000);
      results.push({ mode, rounds });
    }
    return results;
  } finally {
    await cleanup();
    stopCurrent = undefined;
  }
}

function tripCells(latencies: number[], missed: number): string[] {
  return [
    String(latencies.length),
    `${fixed(median(latencies), 0)} ms`,
    `${fixed(percentile(latencies, 95), 0)} ms`,
    `${fixed(latencies.length > 0 ? Math.max(...latencies) : Number.NaN, 0)} ms`,
    String(missed),
  ];
}

const ingestRatio = (r: Round) => r.mine.ackedPerSecond / r.ref.ackedPerSecond;
const p99Ratio = (r: Round) => r.mine.p99Ms / r.ref.p99Ms;

function modeReport(m: ModeResult, o: StormOptions): string {
  const how =
    m.mode === 'start'
      ? '`report-connector start`'
      : '`report-connector serve` beside one `report-connector worker`';
  const rounds = markdownTable(
    [
      'round',
      'load at start → end',
      'reference events/s',
      'reference p99',
      'connector events/s',
      'connector p99',
      'non-2xx / errors',
      'ingest ratio',
      'p99 ratio',
    ],
    m.rounds.flatMap((r, i) => [
      [
        `${i + 1}: reference`,
        `${r.ref.loadStart} → ${r.ref.loadEnd}`,
        fixed(r.ref.ackedPerSecond, 0),
        `${fixed(r.ref.p99Ms, 1)} ms`,
        '',
        '',
        `${r.ref.non2xx} / ${r.ref.errors}`,
        '',
        '',
      ],
      [
        `${i + 1}: connector`,
        `${r.mine.loadStart} → ${r.mine.loadEnd}`,
        '',
        '',
        fixed(r.mine.ackedPerSecond, 0),
        `${fixed(r.mine.p99Ms, 1)} ms`,
        `${r.mine.non2xx} / ${r.mine.errors}`,
        fixed(ingestRatio(r), 2),
        `${fixed(p99Ratio(r), 2)}×`,
      ],
    ]),
  );
  const med = {
    ingest: median(m.rounds.map(ingestRatio)),
    p99: median(m.rounds.map(p99Ratio)),
    refRate: median(m.rounds.map((r) => r.ref.ackedPerSecond)),
    mineRate: median(m.rounds.map((r) => r.mine.ackedPerSecond)),
    refP99: median(m.rounds.map((r) => r.ref.p99Ms)),
    mineP99: median(m.rounds.map((r) => r.mine.p99Ms)),
  };
  const during = m.rounds.flatMap((r) => r.during.latenciesMs);
  const after = m.rounds.flatMap((r) => r.after.latenciesMs);
  const missed = (k: 'during' | 'after') => m.rounds.reduce((a, r) => a + r[k].missed, 0);
  const trips = markdownTable(
    ['score change to CRM record, all rounds', 'samples', 'p50', 'p95', 'max', 'missed (> 60 s)'],
    [
      ['during the storm (one a second, other reports)', ...tripCells(during, missed('during'))],
      [`after the storm (${o.intervalMs} ms apart)`, ...tripCells(after, missed('after'))],
    ],
  );
  const afterP95 = percentile(after, 95);
  const targets = markdownTable(
    ['target', 'median of the rounds', 'met'],
    [
      [
        `ingest ≥ ${TARGETS.ingestRatio} of the reference`,
        `${fixed(med.ingest, 2)} (${fixed(med.mineRate, 0)} vs ${fixed(med.refRate, 0)} events/s)`,
        med.ingest >= TARGETS.ingestRatio ? 'yes' : '**no**',
      ],
      [
        `p99 ≤ ${TARGETS.p99Ratio}× the reference`,
        `${fixed(med.p99, 2)}× (${fixed(med.mineP99, 1)} vs ${fixed(med.refP99, 1)} ms)`,
        med.p99 <= TARGETS.p99Ratio ? 'yes' : '**no**',
      ],
      [
        `after the storm, event to CRM p95 ≤ ${TARGETS.afterP95Ms / 1000} s`,
        `${fixed(afterP95, 0)} ms`,
        afterP95 <= TARGETS.afterP95Ms && missed('after') === 0 ? 'yes' : '**no**',
      ],
    ],
  );
  const drained = m.rounds.map((r) => fixed(r.drainedMs / 1000, 1)).join(', ');
  const cpu = markdownTable(
    ['CPU per acknowledged event (user + system, during the storm)', 'median of the rounds'],
    [
      ['reference process', `${fixed(median(m.rounds.map((r) => r.refCpuUs)), 0)} µs`],
      ["connector's server process", `${fixed(median(m.rounds.map((r) => r.serverCpuUs)), 0)} µs`],
      ["connector's worker process(es)", `${fixed(median(m.rounds.map((r) => r.workersCpuUs)), 0)} µs`],
    ],
  );
  return [
    `### ${how}`,
    '',
    `Rounds, each the reference then the connector (${o.connections} connections × ${o.durationS} s):`,
    '',
    rounds,
    '',
    trips,
    '',
    cpu,
    '',
    `Queues and inbox empty after the last change of each round: ${drained} s.`,
    '',
    targets,
  ].join('\n');
}

async function main(): Promise<void> {
  const o = parseOptions(process.argv.slice(2));
  const machine = await describeMachine(REDIS_URL);
  let cluster: LocalRedisCluster | undefined;
  process.once(
    'SIGINT',
    () =>
      void (stopCurrent?.() ?? Promise.resolve())
        .then(() => cluster?.stop())
        .finally(() => process.exit(130)),
  );
  try {
    if (o.cluster) {
      progress('starting a local three-master Redis Cluster...');
      cluster = await LocalRedisCluster.start({ masters: 3 });
    }
    const results = await runModes(o, cluster?.nodesEnv ?? null);
    const where = o.cluster
      ? 'the connector on a local three-master Redis Cluster of this run, the reference on the one Redis'
      : 'both on the one Redis at REDIS_URL';
    process.stdout.write(
      `Machine: ${machine}; load average at the end ${load()}.\n\n` +
        `Storm: autocannon, ${o.connections} connections for ${o.durationS} s of distinct signed score.changed ` +
        `on ${o.slugs} linked reports; ${where}. The connector runs as the compiled CLI in processes of its own, ` +
        'default REPORTS_RATE_PER_MINUTE, against a generous sandbox and local HubSpot. Single changes are made ' +
        'in the sandbox on other linked reports and timed until the CRM record shows them.\n\n',
    );
    for (const m of results) process.stdout.write(`${modeReport(m, o)}\n\n`);
  } finally {
    await cluster?.stop();
  }
}

try {
  await main();
} catch (err) {
  process.stderr.write(`bench:storm failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = err instanceof UsageError ? 2 : 1;
}
