/**
 * Salesforce changes by Change Data Capture: 50 changes made by hand in the local Salesforce (slugs typed on
 * Accounts without a link, new Accounts, Accounts without a report renamed to a report's name and country,
 * merges of a linked Account into one without a link), one every
 * `--every-ms`, while two `report-connector worker` processes hold the Pub/Sub stream and one of them is killed
 * (SIGKILL) at `--kill-at` changes and replaced. The change poll runs once an hour, so what arrives came by the
 * stream (or by the catch-up a gap asks for). Reports change-to-write latency (p50, p95, max), changes lost (no
 * write within the timeout) and changes applied twice (more connector writes to the record after the change than
 * the change makes: one, two for a merge), and the queryAll calls made meanwhile (merges read their survivor).
 *
 *   npm run bench:cdc -- [--changes 50] [--every-ms 400] [--kill-at 15,35] [--workers 2] [--redis-url ... | --cluster]
 *
 * `--cluster`: a 3-master Redis Cluster of its own (no persistence) in place of one Redis, for the connector and
 * its workers alike; the stream's lease and replay ids then live on whichever shard their keys hash to.
 *
 * The workers are separate processes (`node dist/src/cli/bin.js worker`: run `npm run build` first, the npm
 * script does). Exit status 0 when nothing was lost and p95 is under 3 s.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type LocalSystem, startLocalSystem, workerEnvFor } from '../local/system.js';
import { deleteKeysWithPrefix } from '../src/redis.js';
import { LocalRedisCluster } from '../test/support/redis-cluster.js';
import { REDIS_URL } from '../test/support/redis-url.js';
import { runEnded } from '../test/support/system-state.js';
import { fixed, markdownTable, median, percentile } from './support/measure.js';

interface WorkerChild {
  child: ChildProcess;
  log: string;
}

async function startWorker(env: Record<string, string>): Promise<WorkerChild> {
  const bin = fileURLToPath(new URL('../src/cli/bin.js', import.meta.url));
  const cwd = mkdtempSync(join(tmpdir(), 'rc-cdc-worker-'));
  const child = spawn(process.execPath, [bin, 'worker'], { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
  const worker: WorkerChild = { child, log: '' };
  child.stderr?.on('data', (chunk: Buffer) => {
    worker.log = (worker.log + chunk.toString('utf8')).slice(-100_000);
  });
  const deadline = Date.now() + 120_000;
  while (!worker.log.includes('"worker running"')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await killWorker(worker);
      throw new Error(`a worker did not start: ${worker.log.slice(-2_000)}`);
    }
    await sleep(50);
  }
  return worker;
}

async function killWorker(worker: WorkerChild): Promise<void> {
  const { child } = worker;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

type Kind = 'slug' | 'create' | 'rename' | 'merge';

interface Change {
  n: number;
  kind: Kind;
  /** The record whose write answers the change. */
  recordId: string;
  at: number;
  done: (record: ReturnType<LocalSystem['crm']['record']>) => boolean;
  writtenAt?: number;
}

/** Makes change `n` in the local Salesforce, as a person would, and says which write answers it. */
function makeChange(system: LocalSystem, n: number, taken: Set<string>): Change {
  const sf = system.salesforce!;
  const records = system.recordIds
    .filter((id) => !taken.has(id))
    .map((id) => system.crm.record(id))
    .filter((r) => r !== undefined);
  const unlinked = records.find((r) => r.status === 'no_match' && !r.slug);
  const linked = records.find((r) => r.status === 'matched' && r.slug);
  const kind: Kind = n % 5 === 4 ? 'merge' : n % 5 === 3 ? 'rename' : n % 2 === 0 ? 'slug' : 'create';
  const at = Date.now();
  if (kind === 'create' || !unlinked || !linked) {
    const report = system.sandbox.listReports().filter((r) => r.published)[n % 40]!;
    const [account] = sf.seedAccounts([{ Name: `${report.name} ${n}`, BillingCountry: 'Germany' }]);
    return { n, kind: 'create', recordId: account!.Id, at, done: (r) => Boolean(r?.status) };
  }
  taken.add(unlinked.id);
  if (kind === 'rename') {
    const report = uniquelyNamed(system)[n % 40]!;
    const country = report.geography.split(',').at(-1)!.trim();
    sf.updateAccountAsPerson(unlinked.id, { Name: report.name, BillingCountry: country });
    return { n, kind, recordId: unlinked.id, at, done: (r) => r?.slug === report.slug };
  }
  if (kind === 'slug') {
    sf.updateAccountAsPerson(unlinked.id, { Report_Slug__c: linked.slug });
    return { n, kind, recordId: unlinked.id, at, done: (r) => r?.status === 'matched' };
  }
  taken.add(linked.id);
  sf.mergeAccounts(unlinked.id, [linked.id]);
  return { n, kind, recordId: unlinked.id, at, done: (r) => r?.slug === linked.slug };
}

/** Published reports no other published report shares a name with: a rename to one of them matches it. */
function uniquelyNamed(system: LocalSystem) {
  const published = system.sandbox.listReports().filter((r) => r.published);
  const count = new Map<string, number>();
  for (const r of published) count.set(r.name.toLowerCase(), (count.get(r.name.toLowerCase()) ?? 0) + 1);
  return published.filter((r) => count.get(r.name.toLowerCase()) === 1);
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      changes: { type: 'string', default: '50' },
      'every-ms': { type: 'string', default: '400' },
      'kill-at': { type: 'string', default: '15,35' },
      workers: { type: 'string', default: '2' },
      // Each slug, rename and merge takes an Account without a link: 400 leave enough for 50 changes.
      companies: { type: 'string', default: '400' },
      'redis-url': { type: 'string', default: REDIS_URL },
      cluster: { type: 'boolean', default: false },
    },
  });
  const cluster = values.cluster ? await LocalRedisCluster.start({ masters: 3 }) : null;
  const redisUrl = cluster ? `redis://127.0.0.1:${cluster.nodes[0]!.port}` : values['redis-url'];
  const total = Number(values.changes);
  const everyMs = Number(values['every-ms']);
  const killAt = new Set(values['kill-at'].split(',').filter(Boolean).map(Number));
  const prefix = `rc-bench-cdc-${randomBytes(4).toString('hex')}`;
  const system = await startLocalSystem({
    crm: 'salesforce',
    companies: Number(values.companies),
    workers: 0,
    prefix,
    redisUrl,
    logLevel: 'silent',
    env: { SALESFORCE_POLL_SECONDS: '3600', ...(cluster ? { REDIS_CLUSTER_NODES: cluster.nodesEnv } : {}) },
  });
  const workers: WorkerChild[] = [];
  try {
    const env = workerEnvFor(system);
    for (let i = 0; i < Number(values.workers); i++) workers.push(await startWorker(env));
    await runEnded(system, undefined, 300_000);
    const sf = system.salesforce!;
    // The stream holds a position once its first FetchRequest is answered: from then on changes flow.
    await sleep(3_000);
    const writes = new Map<string, number>();
    sf.org.accountChangeListeners.add((c) => {
      if (c.userId !== sf.integrationUserId || c.changeType !== 'UPDATE') return;
      for (const id of c.ids) writes.set(id, (writes.get(id) ?? 0) + 1);
    });
    const pollsBefore = sf.counters().queryAll ?? 0;
    const taken = new Set<string>();
    const changes: Change[] = [];
    const kills: { at: number; n: number }[] = [];
    const watcher = setInterval(() => {
      for (const c of changes) {
        if (c.writtenAt === undefined && c.done(system.crm.record(c.recordId))) c.writtenAt = Date.now();
      }
    }, 5);
    for (let n = 0; n < total; n++) {
      if (killAt.has(n)) {
        const victim = workers.shift()!;
        kills.push({ at: Date.now(), n });
        await killWorker(victim);
        workers.push(await startWorker(env));
      }
      const change = makeChange(system, n, taken);
      writes.set(change.recordId, 0);
      changes.push(change);
      await sleep(everyMs);
    }
    const deadline = Date.now() + 60_000;
    while (changes.some((c) => c.writtenAt === undefined) && Date.now() < deadline) await sleep(50);
    await sleep(2_000);
    clearInterval(watcher);

    const latencies = changes.filter((c) => c.writtenAt !== undefined).map((c) => c.writtenAt! - c.at);
    const lost = changes.filter((c) => c.writtenAt === undefined);
    // A merge writes the survivor twice by design (the carried link, then its enrichment: crm-change.ts).
    const expectedWrites: Record<Kind, number> = { slug: 1, create: 1, rename: 1, merge: 2 };
    const twice = changes.filter((c) => (writes.get(c.recordId) ?? 0) > expectedWrites[c.kind]);
    const byKind = (k: Kind) =>
      changes.filter((c) => c.kind === k && c.writtenAt !== undefined).map((c) => c.writtenAt! - c.at);
    const row = (label: string, v: number[]) => [
      label,
      String(v.length),
      fixed(median(v) / 1000),
      fixed(percentile(v, 95) / 1000),
      fixed(Math.max(...v) / 1000),
    ];
    console.log(
      markdownTable(
        ['changes', 'written', 'p50 s', 'p95 s', 'max s'],
        [
          row('all', latencies),
          row('slug typed', byKind('slug')),
          row('created', byKind('create')),
          row('renamed', byKind('rename')),
          row('merged', byKind('merge')),
        ],
      ),
    );
    console.log(
      JSON.stringify({
        changes: total,
        everyMs,
        workers: Number(values.workers),
        kills: kills.map((k) => k.n),
        lost: lost.map((c) => `${c.n}:${c.kind}`),
        writtenMoreThanOnce: twice.map((c) => `${c.n}:${c.kind}:${writes.get(c.recordId)}`),
        changePolls: (sf.counters().queryAll ?? 0) - pollsBefore,
        pubsub: sf.pubsub.counts(),
        p50Ms: Math.round(median(latencies)),
        p95Ms: Math.round(percentile(latencies, 95)),
      }),
    );
    return lost.length === 0 && percentile(latencies, 95) < 3_000 ? 0 : 1;
  } finally {
    await Promise.all(workers.map(killWorker));
    await system.close();
    if (cluster) await cluster.stop();
    else await deleteKeysWithPrefix(redisUrl, prefix);
  }
}

process.exitCode = await main();
