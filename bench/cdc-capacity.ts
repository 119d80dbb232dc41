/**
 * What N Salesforce change streams cost one `report-connector worker` process. The local system with N
 * Salesforce installations, each an org of its own (the system's org and N-1 more, each with its own id,
 * instance URL and token) on one Pub/Sub endpoint, as Salesforce's one endpoint serves every org. For each N of
 * `--streams`, in ascending order:
 *
 * 1. the orgs added since the last N are installed and synced by a worker with `SALESFORCE_CHANGE_EVENTS=false`,
 *    which stops once every installation has had its first poll (a stream starts only after it);
 * 2. `--background-seconds` with no worker: the Redis commands of the bench's own process (its metrics loop);
 * 3. one fresh worker with Change Data Capture on: the time until all N streams are open at the endpoint (their
 *    first FetchRequest came), then, once its queues are empty, `--idle-seconds` of idle streams: its CPU time,
 *    its RSS at the end, and the Redis commands counted meanwhile less the background's;
 * 4. `--rate` changes a second for `--changes-seconds` spread over the N orgs (a published report's slug typed on
 *    an Account without a link): change-to-write latency, from the change in the org to the connector's write to
 *    that Account. Then the worker is stopped (SIGTERM: its leases go back).
 *
 * Last, the same idle measurement of a worker with Change Data Capture off among all the installations: what a
 * worker costs without streams.
 *
 *   npm run bench:cdc-capacity -- [--streams 50,100,200] [--idle-seconds 30] [--rate 5] [--changes-seconds 20]
 *     [--background-seconds 10] [--accounts 5] [--redis-url redis://...]
 *
 * Redis is a server of the bench's own (no persistence) unless `--redis-url` names one: INFO commandstats then
 * counts other clients' commands too. Exit status 0 when every N had all its streams open and no change lost.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { LocalPubSub, type SharedPubSubEndpoint } from '../connectors/salesforce/local/pubsub-server.js';
import { type LocalSystem, startLocalSystem, workerEnvFor } from '../local/system.js';
import { closeRedis, createRedis, type RedisClient } from '../src/redis.js';
import { OwnRedisServer } from '../test/support/own-redis.js';
import { CdcFleet, type FleetChange, unmatchedCompanies } from './support/cdc-fleet.js';
import { describeMachine } from './support/machine.js';
import { BenchTimeoutError, fixed, markdownTable, median, percentile, pollUntil } from './support/measure.js';
import {
  callRates,
  commandCalls,
  cpuSeconds,
  rssOf,
  startWorker,
  stopWorker,
  type WorkerChild,
} from './support/process-stats.js';
import { benchPrefix, deleteKeys } from './support/redis-keys.js';

interface Settings {
  idleSeconds: number;
  rate: number;
  changesSeconds: number;
  backgroundSeconds: number;
}

interface Idle {
  rss: number;
  /** The highest RSS since the worker started (VmHWM): the streams' start included. */
  peakRss: number;
  /** CPU seconds per second: 1 is one core busy. */
  cpu: number;
  /** The worker's Redis commands per second by name, the background's taken off. */
  redis: Map<string, number>;
}

interface Round extends Idle {
  streams: number;
  installations: number;
  /** From the spawn, and from its "worker running", until all N streams were open; NaN if they never were. */
  openMs: number;
  openAfterRunningMs: number;
  changes: FleetChange[];
  /** CPU seconds per second while the changes came. */
  changesCpu: number;
  loadStart: string;
  loadEnd: string;
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

function progress(line: string): void {
  process.stderr.write(`[cdc-capacity ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
}

class Bench {
  private readonly cwd = mkdtempSync(join(tmpdir(), 'rc-cdc-capacity-'));
  private readonly workers = new Set<WorkerChild>();
  private readonly slugs: string[];

  constructor(
    private readonly system: LocalSystem,
    private readonly fleet: CdcFleet,
    private readonly endpoint: SharedPubSubEndpoint,
    private readonly probe: RedisClient,
    private readonly settings: Settings,
  ) {
    this.slugs = system.sandbox
      .listReports()
      .filter((r) => r.published)
      .map((r) => r.slug);
  }

  private env(changeEvents: boolean): Record<string, string> {
    return workerEnvFor(this.system, {
      SALESFORCE_PUBSUB_ENDPOINT: this.endpoint.endpoint,
      SALESFORCE_CHANGE_EVENTS: String(changeEvents),
    });
  }

  private async worker(changeEvents: boolean): Promise<WorkerChild> {
    const worker = await startWorker(this.env(changeEvents), this.cwd);
    this.workers.add(worker);
    return worker;
  }

  private async stop(worker: WorkerChild): Promise<void> {
    await stopWorker(worker);
    this.workers.delete(worker);
  }

  /** Installs orgs up to `count`; a worker without streams syncs them and stops once each had its first poll. */
  async grow(count: number): Promise<void> {
    const setup = await this.worker(false);
    try {
      const added = await this.fleet.grow(count);
      progress(
        `${added.length} installations added (${count} in all); waiting for their first sync and poll`,
      );
      const { ctx } = this.system;
      const ids = this.fleet.orgs.map((o) => o.installationId);
      await pollUntil(
        'every installation synced and polled once',
        async () => {
          for (const id of ids) {
            if ((await ctx.index.pollCursors.get(id)) === null) return undefined;
            const [run] = await ctx.runs.recent(id, 1);
            if (run?.state !== 'done' && run?.state !== 'stopped') return undefined;
          }
          return true;
        },
        600_000,
        500,
      );
    } finally {
      await this.stop(setup);
    }
  }

  /** Nothing waiting or active in any queue, three checks in a row (delayed repeatable jobs aside). */
  private async queuesQuiet(): Promise<void> {
    let quiet = 0;
    await pollUntil(
      'the queues to empty',
      async () => {
        const counts = await this.system.ctx.queues.counts();
        const busy = Object.values(counts).some((c) => c.waiting + c.active > 0);
        quiet = busy ? 0 : quiet + 1;
        return quiet >= 3 ? true : undefined;
      },
      120_000,
      250,
    );
  }

  /** Redis commands per second with no worker running: what the bench's own process sends. */
  private async background(): Promise<Map<string, number>> {
    const before = await commandCalls(this.probe);
    const at = Date.now();
    await sleep(this.settings.backgroundSeconds * 1000);
    return callRates(before, await commandCalls(this.probe), (Date.now() - at) / 1000);
  }

  private async idle(worker: WorkerChild, background: Map<string, number>): Promise<Idle> {
    const cpu0 = cpuSeconds(worker.pid);
    const calls0 = await commandCalls(this.probe);
    const at = Date.now();
    await sleep(this.settings.idleSeconds * 1000);
    const seconds = (Date.now() - at) / 1000;
    const rates = callRates(calls0, await commandCalls(this.probe), seconds);
    const redis = new Map<string, number>();
    for (const [name, rate] of rates) {
      const own = rate - (background.get(name) ?? 0);
      if (own > 0.05) redis.set(name, own);
    }
    return {
      rss: rssOf(worker.pid),
      peakRss: rssOf(worker.pid, 'peak'),
      cpu: (cpuSeconds(worker.pid) - cpu0) / seconds,
      redis,
    };
  }

  /** When `streams` streams were open at the endpoint; NaN when they were not within 2 minutes. */
  private async streamsOpen(streams: number): Promise<number> {
    try {
      return await pollUntil(
        `${streams} streams to open`,
        async () => (this.fleet.openStreams() >= streams ? Date.now() : undefined),
        120_000,
        10,
      );
    } catch (err) {
      if (!(err instanceof BenchTimeoutError)) throw err;
      progress(`N=${streams}: only ${this.fleet.openStreams()} streams open after 120 s`);
      return Number.NaN;
    }
  }

  /** One worker holding N streams: how long they take to open, what they cost idle, how fast changes come. */
  async round(streams: number): Promise<Round> {
    const loadStart = load();
    const background = await this.background();
    progress(`N=${streams}: starting a worker with Change Data Capture on`);
    const worker = await this.worker(true);
    try {
      const openAt = await this.streamsOpen(streams);
      progress(
        `N=${streams}: ${this.fleet.openStreams()} streams open; idle for ${this.settings.idleSeconds} s`,
      );
      await this.queuesQuiet();
      const idle = await this.idle(worker, background);
      progress(`N=${streams}: ${this.settings.rate} changes a second for ${this.settings.changesSeconds} s`);
      const cpu0 = cpuSeconds(worker.pid);
      const changesAt = Date.now();
      const changes = await this.changes(streams);
      const changesCpu = (cpuSeconds(worker.pid) - cpu0) / ((Date.now() - changesAt) / 1000);
      return {
        streams,
        installations: this.fleet.orgs.length,
        openMs: openAt - worker.spawnedAt,
        openAfterRunningMs: openAt - worker.runningAt,
        ...idle,
        changes,
        changesCpu,
        loadStart,
        loadEnd: load(),
      };
    } finally {
      await this.stop(worker);
    }
  }

  /** `rate` changes a second over the first `orgs` orgs, interleaved; waits up to 30 s for their writes. */
  private async changes(orgs: number): Promise<FleetChange[]> {
    const { rate, changesSeconds } = this.settings;
    const total = Math.round(rate * changesSeconds);
    const start = Date.now();
    const changes: FleetChange[] = [];
    for (let i = 0; i < total; i++) {
      const due = start + (i * 1000) / rate;
      if (due > Date.now()) await sleep(due - Date.now());
      // 7919 is prime: successive changes land on orgs far apart, and every org once before any twice.
      const org = (i * 7919) % orgs;
      changes.push(this.fleet.change(i, org, this.slugs[i % this.slugs.length]!, `Capacity New ${i}`));
    }
    const deadline = Date.now() + 30_000;
    while (changes.some((c) => c.writtenAt === undefined) && Date.now() < deadline) await sleep(50);
    return changes;
  }

  /** A worker without streams among all the installations, measured as the rounds' idle streams are. */
  async bare(): Promise<Idle> {
    const background = await this.background();
    progress('a worker with Change Data Capture off, idle');
    const worker = await this.worker(false);
    try {
      await this.queuesQuiet();
      return await this.idle(worker, background);
    } finally {
      await this.stop(worker);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.workers].map((w) => stopWorker(w, 0)));
    rmSync(this.cwd, { recursive: true, force: true });
  }
}

const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
const mib = (bytes: number) => fixed(bytes / 1024 / 1024, 0);

function costTable(rounds: Round[], bare: Idle): string {
  // Each row against the one above it (the first against the worker without streams): what one more stream
  // adds, apart from what loading the stream's modules costs once.
  const row = (r: Round, i: number) => {
    const prev = i === 0 ? { streams: 0, rss: bare.rss, redis: bare.redis } : rounds[i - 1]!;
    const more = r.streams - prev.streams;
    return [
      String(r.streams),
      mib(r.rss),
      mib(r.peakRss),
      mib(r.rss - bare.rss),
      fixed((r.rss - prev.rss) / more / 1024, 0),
      fixed(r.cpu * 100, 1),
      fixed(r.openMs / 1000),
      fixed(r.openAfterRunningMs / 1000),
      fixed(total(r.redis), 0),
      fixed((total(r.redis) - total(prev.redis)) / more, 2),
      r.loadStart,
    ];
  };
  return markdownTable(
    [
      'streams',
      'worker RSS MB, idle',
      'peak RSS MB',
      'idle RSS over a worker without streams, MB',
      'KB per stream added (row above)',
      'CPU idle, % of a core',
      'all open, s after spawn',
      's after "worker running"',
      'Redis commands/s (worker, idle)',
      'per stream added',
      'load average at start',
    ],
    [
      ...rounds.map(row),
      [
        '0 (CDC off)',
        mib(bare.rss),
        mib(bare.peakRss),
        '',
        '',
        fixed(bare.cpu * 100, 1),
        '',
        '',
        fixed(total(bare.redis), 0),
        '',
        '',
      ],
    ],
  );
}

function latencyTable(rounds: Round[]): string {
  return markdownTable(
    [
      'streams',
      'changes',
      'written',
      'p50 s',
      'p95 s',
      'max s',
      'worker CPU meanwhile, % of a core',
      'load average start / end',
    ],
    rounds.map((r) => {
      const ms = r.changes.filter((c) => c.writtenAt !== undefined).map((c) => c.writtenAt! - c.at);
      return [
        String(r.streams),
        String(r.changes.length),
        String(ms.length),
        fixed(median(ms) / 1000),
        fixed(percentile(ms, 95) / 1000),
        fixed(Math.max(...ms) / 1000),
        fixed(r.changesCpu * 100, 1),
        `${r.loadStart} / ${r.loadEnd}`,
      ];
    }),
  );
}

function redisTable(rounds: Round[], bare: Idle): string {
  const names = new Set([...rounds.flatMap((r) => [...r.redis.keys()]), ...bare.redis.keys()]);
  const rows = [...names]
    .map((name) => [name, ...rounds.map((r) => r.redis.get(name) ?? 0), bare.redis.get(name) ?? 0] as const)
    .sort((a, b) => Number(b[b.length - 2]) - Number(a[a.length - 2]))
    .map(([name, ...rates]) => [name, ...rates.map((v) => fixed(Number(v), 1))]);
  return markdownTable(
    ['command, per second', ...rounds.map((r) => `${r.streams} streams`), 'no streams'],
    rows,
  );
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      streams: { type: 'string', default: '50,100,200' },
      'idle-seconds': { type: 'string', default: '30' },
      rate: { type: 'string', default: '5' },
      'changes-seconds': { type: 'string', default: '20' },
      'background-seconds': { type: 'string', default: '10' },
      accounts: { type: 'string', default: '5' },
      'redis-url': { type: 'string' },
    },
  });
  const sizes = values.streams
    .split(',')
    .map(Number)
    .filter((n) => n > 0)
    .sort((a, b) => a - b);
  if (sizes.length === 0) {
    console.error('--streams: give one number at least, e.g. 50,100,200');
    return 2;
  }
  const settings: Settings = {
    idleSeconds: Number(values['idle-seconds']),
    rate: Number(values.rate),
    changesSeconds: Number(values['changes-seconds']),
    backgroundSeconds: Number(values['background-seconds']),
  };
  const own = values['redis-url'] ? null : new OwnRedisServer(undefined, { persistence: 'none' });
  await own?.start();
  const redisUrl = values['redis-url'] ?? own!.url;
  const prefix = benchPrefix('cdc-capacity');
  const accounts = Number(values.accounts);
  let system: LocalSystem | null = null;
  let endpoint: SharedPubSubEndpoint | null = null;
  let fleet: CdcFleet | null = null;
  let bench: Bench | null = null;
  const probe = createRedis(redisUrl, 'worker', 'rc-bench-cdc-capacity');
  try {
    const machine = await describeMachine(redisUrl);
    system = await startLocalSystem({
      crm: 'salesforce',
      companies: unmatchedCompanies(0, accounts),
      workers: 0,
      prefix,
      redisUrl,
      logLevel: 'silent',
      env: { SALESFORCE_POLL_SECONDS: '3600' },
    });
    endpoint = await LocalPubSub.listenShared();
    fleet = new CdcFleet(system, endpoint, accounts);
    bench = new Bench(system, fleet, endpoint, probe, settings);
    const rounds: Round[] = [];
    for (const n of sizes) {
      await bench.grow(n);
      rounds.push(await bench.round(n));
    }
    const bare = await bench.bare();
    report(machine, rounds, bare, fleet, settings, own !== null);
    const ok = rounds.every(
      (r) => Number.isFinite(r.openMs) && r.changes.every((c) => c.writtenAt !== undefined),
    );
    return ok ? 0 : 1;
  } finally {
    await bench?.close();
    await endpoint?.close();
    await fleet?.close();
    await system?.close();
    if (own) await own.dispose();
    else await deleteKeys(redisUrl, prefix);
    await closeRedis(probe);
  }
}

function report(
  machine: string,
  rounds: Round[],
  bare: Idle,
  fleet: CdcFleet,
  settings: Settings,
  ownRedis: boolean,
): void {
  console.log(`${machine}; Redis ${ownRedis ? "of the bench's own" : 'shared with other clients'}\n`);
  console.log(costTable(rounds, bare));
  console.log('');
  console.log(latencyTable(rounds));
  console.log('');
  console.log(redisTable(rounds, bare));
  console.log('');
  console.log(
    JSON.stringify({
      settings,
      installations: fleet.orgs.length,
      lost: rounds.map((r) => r.changes.filter((c) => c.writtenAt === undefined).length),
      created: rounds.map((r) => r.changes.filter((c) => c.kind === 'create').length),
      pubsub: fleet.pubsubCounts(),
      queryAll: fleet.counters().queryAll ?? 0,
    }),
  );
}

process.exitCode = await main();
