/**
 * Redis memory per linked record (issue 15): a real backfill of N companies (the local HubSpot, the sandbox with
 * generated reports, the connector in this process), then `MEMORY USAGE <key> SAMPLES 0` over every key of the
 * run's prefix, grouped by kind. "Steady state" is what stays: keys without a TTL (the run caches, locks and
 * duplicate marks expire within a day; BullMQ keeps at most 1,000 completed jobs per queue).
 *
 *   npm run bench:memory -- [--records 10000,100000] [--cluster | --compare] [--burst 2000] [--log-level error]
 *
 * `--cluster` runs the same on a local three-master Redis Cluster (started and stopped here) and adds keys and
 * bytes per master; `--compare` runs each size on one Redis and then on the cluster, and prints the ratios.
 * After each backfill a burst of `--burst` signed score.changed events (on 200 reports, 50 at a time) measures
 * how fast they are acknowledged and how long until every one is written. Tables go to stdout as markdown;
 * progress to stderr.
 */
import { parseArgs } from 'node:util';
import type { Redis } from 'ioredis';
import { type LocalSystem, startLocalSystem } from '../local/system.js';
import { deleteKeysWithPrefix, type RedisClient, scanTargets } from '../src/redis.js';
import { loadFixtureReports } from '../src/sandbox/index.js';
import { LocalRedisCluster } from '../test/support/redis-cluster.js';
import { REDIS_URL } from '../test/support/redis-url.js';
import { postSignedEvent } from '../test/support/report-webhooks.js';
import { MAX_EXTRA_REPORTS, withExtraReports } from './support/fixture-reports.js';
import { describeMachine } from './support/machine.js';
import { benchPrefix } from './support/redis-keys.js';

interface KeyMeasure {
  key: string;
  bytes: number;
  ttl: boolean;
  node: string;
}

export interface MemoryFigures {
  records: number;
  linked: number;
  backfillSeconds: number;
  keys: number;
  totalBytes: number;
  steadyBytes: number;
  groups: { kind: string; keys: number; bytes: number; ttl: boolean }[];
  /** Redis commands (INFO total_commands_processed, every master) during the backfill and during a reconcile. */
  backfillCommands: number;
  reconcileCommands: number;
  reconcileSeconds: number;
  burst: { events: number; acceptedPerSecond: number; drainSeconds: number; refused: number } | null;
  perNode: { node: string; keys: number; bytes: number }[];
}

/** A key's kind: ids, slugs and job ids replaced, so that the keys of one kind add up together. */
export function kindOf(prefix: string, key: string): string {
  const rest = key
    .slice(prefix.length + 1)
    .replace(/\{[^}]*\}/, (tag) => (tag.startsWith('{inbox') ? tag : '{…}'));
  const seg = rest.split(':');
  const more = (n: number) => (seg.length > n ? ':*' : '');
  if (seg[0] === 'inst') return `inst:{id}:${seg[2]}${more(3)}`;
  if (seg[0] === 'run') return `run:{id}${seg[2] ? `:${seg[2]}${more(3)}` : ''}`;
  if (seg[0] === 'installation') return 'installation:{id}';
  if (seg[0] === '{inbox}') return `{inbox}:${seg[1]}${more(2)}`;
  // The slug -> installations fan-out (storage/slug-fanout.ts): its shards, each under a tag of its own, and
  // the installations' numbers.
  const fanoutTag = /^\{slug-(?:inst|fan-\d+)\}$/.exec(key.slice(prefix.length + 1).split(':')[0] ?? '');
  if (fanoutTag) return fanoutTag[0] === '{slug-inst}' ? `{slug-inst}${more(1)}` : `{slug-fan-*}${more(1)}`;
  if (seg[0] === '{…}') {
    // BullMQ: `<prefix>:{queue}:<queue>:<suffix>`; a job is `<queue>:<job id>` (and `:logs`, `:lock`, ...).
    const known = new Set([
      'wait',
      'active',
      'completed',
      'failed',
      'delayed',
      'prioritized',
      'meta',
      'events',
      'id',
      'stalled',
      'stalled-check',
      'marker',
      'pc',
      'repeat',
      'limiter',
      'paused',
      'de',
      'metrics',
    ]);
    const suffix = seg[2] ?? '';
    return `bullmq:${seg[1]}:${known.has(suffix) ? suffix : `job${seg.length > 3 ? `:${seg[3]}` : ''}`}`;
  }
  return `${seg[0]}${more(1)}`;
}

async function measureKeys(client: RedisClient, prefix: string): Promise<KeyMeasure[]> {
  const out: KeyMeasure[] = [];
  for (const node of await scanTargets(client)) {
    const name = `${node.options.host}:${node.options.port}`;
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length === 0) continue;
      out.push(...(await measurePage(node, name, keys)));
    } while (cursor !== '0');
  }
  return out;
}

async function measurePage(node: Redis, name: string, keys: string[]): Promise<KeyMeasure[]> {
  const pipeline = node.pipeline();
  for (const key of keys) {
    pipeline.call('MEMORY', 'USAGE', key, 'SAMPLES', '0');
    pipeline.pttl(key);
  }
  const replies = (await pipeline.exec()) ?? [];
  return keys.flatMap((key, i) => {
    const [errBytes, bytes] = replies[2 * i] ?? [];
    const [, ttl] = replies[2 * i + 1] ?? [];
    // A key that expired between SCAN and MEMORY USAGE answers null: nothing to count.
    if (errBytes || bytes === null || bytes === undefined) return [];
    return [{ key, bytes: Number(bytes), ttl: Number(ttl) >= 0, node: name }];
  });
}

/** Commands every node has processed so far (INFO stats), summed. */
async function commandsProcessed(client: RedisClient): Promise<number> {
  let total = 0;
  for (const node of await scanTargets(client)) {
    const info = await node.info('stats');
    total += Number(/total_commands_processed:(\d+)/.exec(info)?.[1] ?? 0);
  }
  return total;
}

async function queuesIdle(system: LocalSystem): Promise<void> {
  await waitUntil(
    'the queues to be idle',
    async () => {
      const counts = await system.ctx.queues.counts();
      return Object.values(counts).every((c) => c.waiting + c.active + c.delayed === 0);
    },
    600_000,
  );
}

async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * `events` signed score.changed events on up to 200 linked reports, 50 in flight, each report re-scored first;
 * then the time until the inbox and the queues are empty again.
 */
async function burst(system: LocalSystem, events: number): Promise<MemoryFigures['burst']> {
  if (events <= 0) return null;
  const linked = new Set<string>();
  for (const id of system.recordIds) {
    const r = system.crm.record(id);
    if (r?.status === 'matched' && r.slug) linked.add(r.slug);
    if (linked.size >= 200) break;
  }
  const slugs = [...linked];
  for (const [i, slug] of slugs.entries()) {
    system.sandbox.updateReport(slug, { score: { overall: 50 + (i % 40) / 4 } });
  }
  const secret = system.ctx.config.reports.webhookSecrets[0]!;
  const started = Date.now();
  let refused = 0;
  for (let i = 0; i < events; i += 50) {
    const answers = await Promise.all(
      Array.from({ length: Math.min(50, events - i) }, (_, j) => {
        const id = `msg_bench_${i + j}_${Date.now()}`;
        const body = JSON.stringify({
          id,
          type: 'score.changed',
          created_at: new Date().toISOString(),
          data: { slug: slugs[(i + j) % slugs.length] },
        });
        return postSignedEvent(`${system.appUrl}/webhooks/reports`, secret, body, { id });
      }),
    );
    refused += answers.filter((a) => a.status !== 202).length;
  }
  const acceptedMs = Date.now() - started;
  await waitUntil(
    'the burst to be written',
    async () => (await system.ctx.pipeline.deps.inbox.waiting()) === 0 && (await idleNow(system)),
    600_000,
  );
  return {
    events,
    acceptedPerSecond: events / (acceptedMs / 1000),
    drainSeconds: (Date.now() - started) / 1000,
    refused,
  };
}

async function idleNow(system: LocalSystem): Promise<boolean> {
  const counts = await system.ctx.queues.counts();
  return Object.values(counts).every((c) => c.waiting + c.active + c.delayed === 0);
}

async function measureOne(
  records: number,
  clusterNodes: string | null,
  logLevel: string,
  burstEvents: number,
): Promise<MemoryFigures> {
  const prefix = benchPrefix('memory');
  // One report per company where the generator has enough (each linked record its own report, as in a real CRM).
  const fixtures = withExtraReports(loadFixtureReports(), Math.min(records, MAX_EXTRA_REPORTS));
  process.stderr.write(`${records} records: seeding the local HubSpot (${fixtures.length} reports)\n`);
  const started = Date.now();
  let system: LocalSystem | undefined;
  try {
    system = await startLocalSystem({
      prefix,
      companies: records,
      fixtures,
      workers: 1,
      logLevel,
      sandboxRateLimitPerMinute: 6_000_000,
      ...(clusterNodes ? { env: { REDIS_CLUSTER_NODES: clusterNodes } } : {}),
    });
    const s = system;
    const seeded = Date.now();
    // Counted from here: the seeding and the installation's first commands are done before.
    const commandsAtStart = await commandsProcessed(s.ctx.redis);
    await waitUntil(
      'the backfill to end',
      async () => {
        const [run] = await s.ctx.runs.recent(s.installationId, 1);
        if (run && Date.now() - seeded > 30_000 && (Date.now() - seeded) % 30_000 < 600) {
          process.stderr.write(`  ${run.state}: ${run.totals.records} of ${run.recordsListed} records\n`);
        }
        return run?.state === 'done' || run?.state === 'stopped';
      },
      3 * 3_600_000,
    );
    await queuesIdle(s);
    const backfillSeconds = (Date.now() - seeded) / 1000;
    const backfillCommands = (await commandsProcessed(s.ctx.redis)) - commandsAtStart;
    const coverage = await s.ctx.index.coverage(s.installationId);
    const linked = coverage.matched;
    process.stderr.write(
      `  backfill done in ${backfillSeconds.toFixed(0)} s (${linked} linked); measuring\n`,
    );
    const keys = await measureKeys(s.ctx.redis, prefix);
    // The daily sweep: every linked report read again, nothing changed in between.
    const beforeSweep = await commandsProcessed(s.ctx.redis);
    const sweepStarted = Date.now();
    // A day on: the backfill was a full pass within the period, which the sweep skips.
    await s.ctx.pipeline.reconcileAll(Date.now() + 25 * 3_600_000);
    await waitUntil(
      'the reconcile sweep to end',
      async () => {
        const [run] = await s.ctx.runs.recent(s.installationId, 1);
        return run?.kind === 'reconcile' && (run.state === 'done' || run.state === 'stopped');
      },
      3 * 3_600_000,
    );
    await queuesIdle(s);
    const reconcileSeconds = (Date.now() - sweepStarted) / 1000;
    const reconcileCommands = (await commandsProcessed(s.ctx.redis)) - beforeSweep;
    process.stderr.write(`  reconcile sweep done in ${reconcileSeconds.toFixed(0)} s\n`);
    const burstFigures = await burst(s, burstEvents);
    const byKind = new Map<string, { kind: string; keys: number; bytes: number; ttl: boolean }>();
    for (const k of keys) {
      const kind = kindOf(prefix, k.key);
      const g = byKind.get(`${kind} ${k.ttl}`) ?? { kind, keys: 0, bytes: 0, ttl: k.ttl };
      g.keys += 1;
      g.bytes += k.bytes;
      byKind.set(`${kind} ${k.ttl}`, g);
    }
    const byNode = new Map<string, { node: string; keys: number; bytes: number }>();
    for (const k of keys) {
      const n = byNode.get(k.node) ?? { node: k.node, keys: 0, bytes: 0 };
      n.keys += 1;
      n.bytes += k.bytes;
      byNode.set(k.node, n);
    }
    return {
      records,
      linked,
      backfillSeconds,
      keys: keys.length,
      totalBytes: keys.reduce((a, k) => a + k.bytes, 0),
      steadyBytes: keys.filter((k) => !k.ttl).reduce((a, k) => a + k.bytes, 0),
      groups: [...byKind.values()].sort((a, b) => b.bytes - a.bytes),
      perNode: [...byNode.values()].sort((a, b) => a.node.localeCompare(b.node)),
      backfillCommands,
      reconcileCommands,
      reconcileSeconds,
      burst: burstFigures,
    };
  } finally {
    process.stderr.write(`  (${((Date.now() - started) / 1000).toFixed(0)} s in all) cleaning up\n`);
    await system?.close();
    await deleteKeysWithPrefix(
      clusterNodes
        ? {
            redisUrl: REDIS_URL,
            redisClusterNodes: clusterNodes.split(',').map((hp) => {
              const [host, port] = hp.split(':');
              return { host: host!, port: Number(port) };
            }),
          }
        : REDIS_URL,
      prefix,
    );
  }
}

function table(f: MemoryFigures, mode: string): string {
  const per = (bytes: number) => (f.linked > 0 ? (bytes / f.linked).toFixed(1) : '-');
  const queueBytes = f.groups
    .filter((g) => g.kind.startsWith('bullmq:') && !g.ttl)
    .reduce((a, g) => a + g.bytes, 0);
  const lines = [
    `### ${f.records.toLocaleString('en')} records on ${mode}: ${f.linked.toLocaleString('en')} linked, backfill ${f.backfillSeconds.toFixed(0)} s`,
    '',
    `Steady state (keys without TTL): ${f.steadyBytes.toLocaleString('en')} bytes, **${per(f.steadyBytes)} bytes per linked record**; ` +
      `with the keys that expire (run caches, marks): ${f.totalBytes.toLocaleString('en')} bytes, ${per(f.totalBytes)} per linked record; ${f.keys.toLocaleString('en')} keys.`,
    '',
    `Steady state without BullMQ's kept completed jobs (bounded by count, not by records): ${(f.steadyBytes - queueBytes).toLocaleString('en')} bytes, ` +
      `**${per(f.steadyBytes - queueBytes)} bytes per linked record**, ${((f.steadyBytes - queueBytes) / f.records).toFixed(1)} per record.`,
    '',
    `Redis commands: backfill ${f.backfillCommands.toLocaleString('en')} (${(f.backfillCommands / f.records).toFixed(1)} per record, ` +
      `${(f.backfillCommands / f.backfillSeconds).toFixed(0)}/s); reconcile sweep ${f.reconcileCommands.toLocaleString('en')} ` +
      `(${(f.reconcileCommands / f.records).toFixed(1)} per record) in ${f.reconcileSeconds.toFixed(0)} s` +
      (f.perNode.length > 1 ? '.' : " (a shared Redis: other clients' commands are counted too)."),
    ...(f.burst
      ? [
          '',
          `Burst: ${f.burst.events.toLocaleString('en')} score.changed events acknowledged at ${f.burst.acceptedPerSecond.toFixed(0)}/s ` +
            `(${f.burst.refused} refused), all written ${f.burst.drainSeconds.toFixed(1)} s after the first.`,
        ]
      : []),
    '',
    '| key kind | expires | keys | bytes | bytes per linked record |',
    '|---|---|---:|---:|---:|',
    ...f.groups
      .filter((g) => g.bytes >= f.totalBytes / 1000)
      .map(
        (g) =>
          `| \`${g.kind}\` | ${g.ttl ? 'yes' : 'no'} | ${g.keys.toLocaleString('en')} | ${g.bytes.toLocaleString('en')} | ${per(g.bytes)} |`,
      ),
  ];
  if (f.perNode.length > 1) {
    lines.push('', '| master | keys | bytes |', '|---|---:|---:|');
    for (const n of f.perNode)
      lines.push(`| ${n.node} | ${n.keys.toLocaleString('en')} | ${n.bytes.toLocaleString('en')} |`);
  }
  return lines.join('\n');
}

/** Cluster against one Redis, same machine, same data: above 1 means the cluster has more of it. */
function ratios(single: MemoryFigures, cluster: MemoryFigures): string {
  const steady = (f: MemoryFigures) =>
    f.steadyBytes -
    f.groups.filter((g) => g.kind.startsWith('bullmq:') && !g.ttl).reduce((a, g) => a + g.bytes, 0);
  const rows: [string, number, number][] = [
    [
      'backfill, records per second',
      single.records / single.backfillSeconds,
      cluster.records / cluster.backfillSeconds,
    ],
    [
      'steady bytes per linked record (BullMQ jobs aside)',
      steady(single) / single.linked,
      steady(cluster) / cluster.linked,
    ],
    ['reconcile sweep, seconds', single.reconcileSeconds, cluster.reconcileSeconds],
  ];
  if (single.burst && cluster.burst) {
    rows.push([
      'burst, events acknowledged per second',
      single.burst.acceptedPerSecond,
      cluster.burst.acceptedPerSecond,
    ]);
    rows.push(['burst, seconds until all written', single.burst.drainSeconds, cluster.burst.drainSeconds]);
  }
  return [
    `### ${single.records.toLocaleString('en')} records: the cluster beside one Redis`,
    '',
    '| | one Redis | cluster | cluster / one |',
    '|---|---:|---:|---:|',
    ...rows.map(([what, a, b]) => `| ${what} | ${a.toFixed(1)} | ${b.toFixed(1)} | ${(b / a).toFixed(2)} |`),
  ].join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      records: { type: 'string', default: '10000' },
      cluster: { type: 'boolean', default: false },
      compare: { type: 'boolean', default: false },
      burst: { type: 'string', default: '2000' },
      'log-level': { type: 'string', default: 'error' },
    },
  });
  const sizes = values.records.split(',').map((v) => Number(v.trim()));
  if (sizes.some((n) => !Number.isInteger(n) || n <= 0))
    throw new Error('--records takes whole numbers, comma-separated');
  const burstEvents = Number(values.burst);
  let cluster: LocalRedisCluster | undefined;
  try {
    if (values.cluster || values.compare) cluster = await LocalRedisCluster.start({ masters: 3 });
    const modes: { name: string; nodes: string | null }[] = [];
    if (!values.cluster) modes.push({ name: 'one Redis', nodes: null });
    if (cluster) modes.push({ name: 'a local three-master Redis Cluster', nodes: cluster.nodesEnv });
    process.stdout.write(`Machine: ${await describeMachine(REDIS_URL)}\n\n`);
    for (const n of sizes) {
      const byMode: MemoryFigures[] = [];
      for (const mode of modes) {
        const figures = await measureOne(n, mode.nodes, values['log-level'], burstEvents);
        byMode.push(figures);
        process.stdout.write(`${table(figures, mode.name)}\n\n`);
      }
      if (byMode.length === 2) process.stdout.write(`${ratios(byMode[0]!, byMode[1]!)}\n\n`);
    }
  } finally {
    await cluster?.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
