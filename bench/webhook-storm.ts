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
 *                          [--companies 400] [--cluster | --compare] [--log-level error]
 *
 * Storm events are distinct (each its own id), signed beforehand, spread over `--slugs` linked reports.
 *
 * `--cluster` runs the connector on a local three-master Redis Cluster (test/support/redis-cluster.ts, started
 * and stopped here, reached through REDIS_CLUSTER_NODES); `--compare` runs the whole storm on one Redis and then
 * on the cluster, in one run, and prints the ratios. Both add each node's keys after the storm and commands
 * during it. The reference ingest stays on the one Redis at REDIS_URL in every mode: it is the floor of a
 * durable ingest on one Redis, against which each mode's connector is put.
 */
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
  EventToCrmResult,
  NodeFigures,
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
  /** The connector on a local cluster only, or on one Redis and then on the cluster. */
  cluster: boolean;
  compare: boolean;
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
      cluster: { type: 'boolean', default: false },
      compare: { type: 'boolean', default: false },
    },
  });
  if (values.cluster && values.compare)
    throw new UsageError('--cluster and --compare exclude each other (--compare runs the cluster too)');
  return {
    durationS: intOption('duration', values.duration, 20, 1, 300),
    connections: intOption('connections', values.connections, 32, 1, 1_000),
    slugs: intOption('slugs', values.slugs, 100, 1, 10_000),
    samples: intOption('samples', values.samples, 50, 1, 10_000),
    intervalMs: intOption('interval', values.interval, 200, 10, 60_000),
    companies: intOption('companies', values.companies, 400, 10, 100_000),
    logLevel: values['log-level'] ?? 'error',
    cluster: values.cluster ?? false,
    compare: values.compare ?? false,
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

/** Where the connector's Redis is in one storm run. */
interface Mode {
  /** Words for the output: "one Redis", "a local three-master Redis Cluster". */
  name: string;
  /** REDIS_CLUSTER_NODES for the connector; null on the one Redis at REDIS_URL. */
  clusterNodes: string | null;
}

type Work = { reportRequests: number; crmWriteCalls: number };

/** Everything one storm run measured, for its own tables and for the comparison between modes. */
interface StormRun {
  mode: Mode;
  stormSlugs: number;
  singleSlugs: number;
  refBefore: Storm;
  refAfter: Storm;
  /** Mean of the reference before and after the connector's storm. */
  ref: Storm;
  mine: Storm;
  during: EventToCrmResult;
  after: EventToCrmResult;
  accepted: number;
  work: { before: Work; afterStorm: Work; end: Work };
  waitedMs: number;
  /** Each node before the storm, when it ended (commands) and once the queue was empty (keys too). */
  nodesBefore: NodeFigures[];
  nodesAfterStorm: NodeFigures[];
  nodesEnd: NodeFigures[];
}

/** Stops what the run under way started; set while one is, so Ctrl-C can stop it. */
let stopCurrent: (() => Promise<void>) | undefined;

async function runStorm(o: StormOptions, mode: Mode): Promise<StormRun> {
  const redisUrl = REDIS_URL;
  const prefix = benchPrefix('storm');
  // A prefix of its own, so that the keys counted under the connector's after the storm are the connector's.
  const referencePrefix = benchPrefix('storm-ref');
  let system: RpcChild<WebhookSystemProtocol, WebhookSystemReady> | undefined;
  let reference: RpcChild<ReferenceIngestProtocol, ReferenceIngestReady> | undefined;
  const cleanup = async () => {
    await reference?.stop();
    await system?.stop();
    // The reference's keys, and the connector's on one Redis; a cluster is this bench's own and goes whole.
    await deleteKeys(redisUrl, prefix);
    await deleteKeys(redisUrl, referencePrefix);
  };
  stopCurrent = cleanup;
  try {
    progress(
      `${mode.name}: starting a local system with ${o.companies} companies and waiting for its first backfill...`,
    );
    const systemConfig: WebhookSystemConfig = {
      companies: o.companies,
      prefix,
      redisUrl,
      workers: 1,
      logLevel: o.logLevel,
      timeoutMs: 300_000,
      connectorRatePerMinute: null,
      sandboxRatePerMinute: SANDBOX_PER_MINUTE,
      clusterNodes: mode.clusterNodes,
    };
    system = await RpcChild.start(SYSTEM_MODULE, systemConfig, { timeoutMs: 360_000 });
    // Always on the one Redis, whatever the connector's mode: the reference is the floor of a one-Redis ingest.
    const referenceConfig: ReferenceIngestConfig = {
      redisUrl,
      prefix: referencePrefix,
      secret: system.ready.secret,
    };
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
    const nodesBefore = await system.call('nodes', { keys: false });
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
    const nodesAfterStorm = await system.call('nodes', { keys: false });
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
    const nodesEnd = await system.call('nodes', { keys: true }, 120_000);
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
    return {
      mode,
      stormSlugs: stormSlugs.length,
      singleSlugs: singleSlugs.length,
      refBefore,
      refAfter,
      ref,
      mine,
      during: duringTrip,
      after,
      accepted: outcomes.accepted ?? 0,
      work: { before, afterStorm: afterStormWork, end },
      waitedMs,
      nodesBefore,
      nodesAfterStorm,
      nodesEnd,
    };
  } finally {
    await cleanup();
    stopCurrent = undefined;
  }
}

function ingestTable(r: StormRun, referenceWhere: string): string {
  const row = (label: string, s: Storm) => [
    label,
    fixed(s.ackedPerSecond, 0),
    `${fixed(s.p50Ms, 1)} ms`,
    `${fixed(s.p99Ms, 1)} ms`,
    String(s.non2xx),
    String(s.errors),
  ];
  return markdownTable(
    ['ingest', 'acknowledged events/s', 'p50', 'p99', 'non-2xx', 'socket errors'],
    [
      row(`reference${referenceWhere}, before the connector's storm`, r.refBefore),
      row('reference, after it', r.refAfter),
      row('reference, mean of the two (node:http, verify, SET NX + RPUSH)', r.ref),
      row('connector `POST /webhooks/reports`', r.mine),
      [
        '**ratio** (connector / reference)',
        `**${fixed(r.mine.ackedPerSecond / r.ref.ackedPerSecond, 2)}**`,
        '',
        `**${fixed(r.mine.p99Ms / r.ref.p99Ms, 2)}×**`,
        '',
        '',
      ],
    ],
  );
}

function tripTable(r: StormRun, o: StormOptions): string {
  return markdownTable(
    ['score change to CRM record', 'samples', 'p50', 'p95', 'max', 'missed (> 60 s)'],
    [
      tripRow('during the storm (one a second, other reports)', r.during),
      tripRow(`after the storm (${o.intervalMs} ms apart)`, r.after),
    ],
  );
}

function workLine(r: StormRun): string {
  const { before, afterStorm, end } = r.work;
  return (
    `Work: ${r.accepted} events accepted in all; report-service requests during the storm ` +
    `${afterStorm.reportRequests - before.reportRequests}, CRM write calls ${afterStorm.crmWriteCalls - before.crmWriteCalls}; ` +
    `until the queue was empty ${end.reportRequests - before.reportRequests} and ${end.crmWriteCalls - before.crmWriteCalls}; ` +
    `queue empty ${fixed(r.waitedMs / 1000, 1)} s after the last change.`
  );
}

function targetsTable(r: StormRun): string {
  const ingestRatio = r.mine.ackedPerSecond / r.ref.ackedPerSecond;
  const p99Ratio = r.mine.p99Ms / r.ref.p99Ms;
  const afterP95 = percentile(r.after.latenciesMs, 95);
  return markdownTable(
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
        afterP95 < TARGETS.afterP95Ms && r.after.missed === 0 ? 'yes' : '**no**',
      ],
    ],
  );
}

function stormIntro(r: StormRun, o: StormOptions): string {
  return (
    `Storm: autocannon, ${o.connections} connections for ${o.durationS} s, distinct signed score.changed events on ` +
    `${r.stormSlugs} linked reports. The connector runs as \`start\` does (server and workers in one ` +
    'process, default REPORTS_RATE_PER_MINUTE) against a generous sandbox and local HubSpot. Single changes are ' +
    `made in the sandbox on ${r.singleSlugs} other linked reports and timed until the CRM record shows them.`
  );
}

/** The output without `--cluster` or `--compare`: one Redis, as the bench always printed it. */
function oneRedisReport(r: StormRun, o: StormOptions, machine: string): string {
  return [
    `Machine: ${machine}.`,
    '',
    stormIntro(r, o),
    '',
    ingestTable(r, ''),
    '',
    tripTable(r, o),
    '',
    workLine(r),
    '',
    targetsTable(r),
  ].join('\n');
}

/**
 * Each node after the storm: the keys of the run's prefix once the queue was empty, and the commands it
 * processed during the storm (the acknowledgements and whatever the workers did meanwhile). On a cluster the
 * shares say how evenly one installation's storm spreads over the masters.
 */
function spreadTable(r: StormRun, o: StormOptions): string {
  const keys = r.nodesEnd.reduce((a, n) => a + (n.keys ?? 0), 0);
  const during = (node: string) => {
    const before = r.nodesBefore.find((n) => n.node === node)?.commands ?? 0;
    const after = r.nodesAfterStorm.find((n) => n.node === node)?.commands ?? before;
    return after - before;
  };
  const commands = r.nodesEnd.reduce((a, n) => a + during(n.node), 0);
  const acked = r.mine.ackedPerSecond * o.durationS;
  const share = (part: number, whole: number) => (whole > 0 ? `${fixed((100 * part) / whole, 0)}%` : '-');
  return markdownTable(
    [
      r.nodesEnd.length > 1 ? 'master' : 'Redis',
      'keys after the storm',
      'share',
      'commands during the storm',
      'share',
      'per acknowledged event',
    ],
    r.nodesEnd.map((n) => [
      n.node,
      (n.keys ?? 0).toLocaleString('en'),
      share(n.keys ?? 0, keys),
      during(n.node).toLocaleString('en'),
      share(during(n.node), commands),
      acked > 0 ? fixed(during(n.node) / acked, 1) : '-',
    ]),
  );
}

/** One mode's tables when `--cluster` or `--compare` is given. */
function modeReport(r: StormRun, o: StormOptions): string {
  const shared =
    r.mode.clusterNodes === null
      ? " The one Redis is the machine's shared one: its commands include other clients'."
      : " The cluster is this run's own: its commands are the connector's only.";
  return [
    `### The connector on ${r.mode.name}`,
    '',
    stormIntro(r, o),
    '',
    ingestTable(r, ' (one Redis, whatever the mode)'),
    '',
    tripTable(r, o),
    '',
    workLine(r),
    '',
    `Keys of the run's prefix once the queue was empty, and Redis commands during the ${o.durationS} s storm.${shared}`,
    '',
    spreadTable(r, o),
    '',
    targetsTable(r),
  ].join('\n');
}

/** The cluster against one Redis, same machine, same storm: above 1 means the cluster has more of it. */
function ratiosTable(one: StormRun, cluster: StormRun): string {
  const p = (t: EventToCrmResult, q: number) =>
    q === 50 ? median(t.latenciesMs) : percentile(t.latenciesMs, q);
  // [what, one Redis, cluster, digits]
  const rows: [string, number, number, number][] = [
    ['events acknowledged per second', one.mine.ackedPerSecond, cluster.mine.ackedPerSecond, 0],
    [
      "events acknowledged per second, as a share of the reference measured beside it (the reference's load moves)",
      one.mine.ackedPerSecond / one.ref.ackedPerSecond,
      cluster.mine.ackedPerSecond / cluster.ref.ackedPerSecond,
      2,
    ],
    ['acknowledgement p99, ms', one.mine.p99Ms, cluster.mine.p99Ms, 1],
    [
      'acknowledgement p99, times the reference beside it',
      one.mine.p99Ms / one.ref.p99Ms,
      cluster.mine.p99Ms / cluster.ref.p99Ms,
      2,
    ],
    ['event to CRM during the storm, p50 ms', p(one.during, 50), p(cluster.during, 50), 0],
    ['event to CRM during the storm, p95 ms', p(one.during, 95), p(cluster.during, 95), 0],
    ['event to CRM after the storm, p50 ms', p(one.after, 50), p(cluster.after, 50), 0],
    ['event to CRM after the storm, p95 ms', p(one.after, 95), p(cluster.after, 95), 0],
  ];
  const waited = [one.waitedMs / 1000, cluster.waitedMs / 1000] as const;
  return [
    '### The cluster beside one Redis',
    '',
    markdownTable(
      ['', 'one Redis', 'cluster', 'cluster / one'],
      [
        ...rows.map(([what, a, b, digits]) => [what, fixed(a, digits), fixed(b, digits), fixed(b / a, 2)]),
        [
          'queue empty after the last change, s',
          fixed(waited[0], 1),
          fixed(waited[1], 1),
          // Two queues already empty when the last change landed: their ratio is noise.
          Math.min(...waited) < 0.5 ? '-' : fixed(waited[1] / waited[0], 2),
        ],
      ],
    ),
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
    if (!o.cluster && !o.compare) {
      const run = await runStorm(o, { name: 'one Redis', clusterNodes: null });
      process.stdout.write(`${oneRedisReport(run, o, machine)}\n`);
      return;
    }
    progress('starting a local three-master Redis Cluster...');
    cluster = await LocalRedisCluster.start({ masters: 3 });
    const modes: Mode[] = [];
    if (o.compare) modes.push({ name: 'one Redis', clusterNodes: null });
    modes.push({ name: 'a local three-master Redis Cluster', clusterNodes: cluster.nodesEnv });
    process.stdout.write(
      `Machine: ${machine}.\n\nThe reference ingest runs on the one Redis at REDIS_URL in every mode: it is ` +
        'the floor of a durable ingest on one Redis, measured beside each mode. The cluster is three ' +
        '`redis-server` processes of this run on the same machine, beside the shared one Redis.\n\n',
    );
    const runs: StormRun[] = [];
    for (const mode of modes) {
      const run = await runStorm(o, mode);
      runs.push(run);
      process.stdout.write(`${modeReport(run, o)}\n\n`);
    }
    if (runs.length === 2) process.stdout.write(`${ratiosTable(runs[0]!, runs[1]!)}\n`);
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
