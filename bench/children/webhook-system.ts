/**
 * Child process of bench/webhooks.ts: a whole local system (sandbox, local HubSpot, server, workers) as
 * `startLocalSystem` builds it, after its first backfill. The load generator runs in the parent, so the two do
 * not share an event loop. Calls: `outcomes` (the server's own count of webhook answers), `drain` (wait for
 * the realtime queue to empty) and `eventToCrm` (score changes in the sandbox, timed until the CRM shows them).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { type LocalSystem, startLocalSystem, workerEnvFor } from '../../local/system.js';
import { jobIdPart } from '../../src/pipeline/queues.js';
import { scanTargets } from '../../src/redis.js';
import { freePort } from '../../src/util/free-port.js';
import { pollUntil } from '../support/measure.js';
import { serveRpc } from '../support/rpc.js';

export interface WebhookSystemConfig {
  companies: number;
  prefix: string;
  redisUrl: string;
  workers: number;
  logLevel: string;
  timeoutMs: number;
  /**
   * The connector's pace for report reads (REPORTS_RATE_PER_MINUTE) and the sandbox's limit; unset, both are
   * REPORTS_PER_MINUTE. `connectorRatePerMinute: null` leaves the connector at its default, as `start` runs.
   */
  connectorRatePerMinute?: number | null;
  sandboxRatePerMinute?: number;
  /** `host:port,…` of a Redis Cluster (REDIS_CLUSTER_NODES): the connector runs on it instead of `redisUrl`. */
  clusterNodes?: string | null;
}

export interface WebhookSystemReady {
  appUrl: string;
  /** The Standard Webhooks secret the app verifies with (`whsec_…`). */
  secret: string;
  /** Published slugs, for events. */
  slugs: string[];
  /** One linked record per distinct slug, for the event-to-CRM timing. */
  linked: { recordId: string; slug: string }[];
}

export interface EventToCrmResult {
  /** Milliseconds from the sandbox change to the record showing the new score, one per sample that arrived. */
  latenciesMs: number[];
  /** Samples whose change had not reached the CRM within the time limit. */
  missed: number;
}

/** One Redis (or one master of a cluster): the keys of this system's prefix on it, and its command count. */
export interface NodeFigures {
  node: string;
  /** Keys under the system's prefix; null when not counted (counting scans the whole node). */
  keys: number | null;
  /** INFO `total_commands_processed`: every client's commands, so on a shared Redis more than ours. */
  commands: number;
}

export type WebhookSystemProtocol = {
  outcomes: { args: null; result: Record<string, number> };
  drain: { args: { timeoutMs: number; settle?: boolean }; result: { waitedMs: number } };
  eventToCrm: { args: { samples: number; perSampleTimeoutMs: number }; result: EventToCrmResult };
  /** The realtime queue's job counts by state, and the score changes waiting for their fan-out. */
  backlog: { args: null; result: Record<string, number> };
  /** One change on `slug`, with the times (ms after it) at which each stage of its path was first seen. */
  trace: { args: { slug: string }; result: Record<string, number> };
  /** Report-service requests and CRM write calls so far. */
  work: { args: null; result: { reportRequests: number; crmWriteCalls: number } };
  changesApart: {
    args: { samples: number; intervalMs: number; slugs: string[]; perSampleTimeoutMs: number };
    result: EventToCrmResult;
  };
  /** Each node the connector's keys live on (the one Redis, or every master), optionally with its key count. */
  nodes: { args: { keys: boolean }; result: NodeFigures[] };
  /**
   * The connector as operators run it: `report-connector start`, or `serve` beside one `worker`, as OS processes
   * of their own on this system's Redis, sandbox and local CRM; this process's own workers stop and the
   * sandbox's webhooks go to the new server. `cpuProfDir` runs them with `node --cpu-prof`.
   */
  launch: {
    args: { mode: ConnectorMode; cpuProfDir?: string; cli?: string };
    result: { appUrl: string };
  };
  /** Stops what `launch` started (SIGTERM: active jobs finish). */
  halt: { args: null; result: null };
  /**
   * CPU seconds (user + system) used so far by the launched server process, and by every other connector
   * process (`serve`'s worker, `start`'s worker child): the cost per event, which a loaded machine's share of
   * CPU does not move as it moves the rate.
   */
  cpu: { args: null; result: { server: number; others: number } };
};

export type ConnectorMode = 'start' | 'serve';

const POLL_MS = 5;
/** The sandbox's limit and the connector's pace for re-reads after events. */
export const REPORTS_PER_MINUTE = 6_000;

async function outcomes(system: LocalSystem): Promise<Record<string, number>> {
  const metric = await system.ctx.metrics.webhookEvents.get();
  const out: Record<string, number> = {};
  for (const v of metric.values) {
    if (v.labels.source !== 'reports') continue;
    const outcome = String(v.labels.outcome);
    out[outcome] = (out[outcome] ?? 0) + v.value;
  }
  return out;
}

async function nodeFigures(system: LocalSystem, countKeys: boolean): Promise<NodeFigures[]> {
  const out: NodeFigures[] = [];
  for (const node of await scanTargets(system.ctx.redis)) {
    const info = await node.info('stats');
    const commands = Number(/total_commands_processed:(\d+)/.exec(info)?.[1] ?? 0);
    let keys: number | null = null;
    if (countKeys) {
      keys = 0;
      let cursor = '0';
      do {
        const [next, page] = await node.scan(cursor, 'MATCH', system.ctx.keys.everything(), 'COUNT', 1000);
        cursor = next;
        keys += page.length;
      } while (cursor !== '0');
    }
    out.push({ node: `${node.options.host}:${node.options.port}`, keys, commands });
  }
  return out;
}

/**
 * Waits for the realtime queue to empty; `settle` also for the backfill queue (a storm's hot reports are
 * updated there, and a start-up reconcile runs there) and the score-change inbox, so that the next
 * measurement starts on an idle connector.
 */
async function drain(system: LocalSystem, timeoutMs: number, settle = false): Promise<{ waitedMs: number }> {
  const started = Date.now();
  await pollUntil(
    settle ? 'the realtime and backfill queues and the inbox to empty' : 'the realtime queue to empty',
    async () => {
      const { realtime, backfill } = await system.ctx.queues.counts();
      const busy = (q: typeof realtime) => q.waiting + q.active + q.delayed;
      if (busy(realtime) > 0) return undefined;
      if (
        settle &&
        (busy(backfill) > 0 || (await system.ctx.redis.zcard(system.ctx.keys.scoreInboxOrder())) > 0)
      )
        return undefined;
      return true;
    },
    timeoutMs,
    100,
  );
  return { waitedMs: Date.now() - started };
}

/** A score different from `current`, varied per sample so that every change is a real change. */
function nextScore(current: number | null, sample: number): number {
  const candidate = Math.round((15 + ((sample * 7.3) % 80)) * 10) / 10;
  return candidate === current ? Math.round((candidate + 0.1) * 10) / 10 : candidate;
}

async function eventToCrm(
  system: LocalSystem,
  linked: WebhookSystemReady['linked'],
  samples: number,
  perSampleTimeoutMs: number,
): Promise<EventToCrmResult> {
  const latenciesMs: number[] = [];
  let missed = 0;
  for (let i = 0; i < samples; i++) {
    const target = linked[i % linked.length]!;
    const overall = nextScore(system.crm.record(target.recordId)?.score ?? null, i);
    const changedAt = performance.now();
    system.sandbox.updateReport(target.slug, { score: { overall } });
    const deadline = changedAt + perSampleTimeoutMs;
    while (system.crm.record(target.recordId)?.score !== overall && performance.now() < deadline) {
      await sleep(POLL_MS);
    }
    if (system.crm.record(target.recordId)?.score === overall)
      latenciesMs.push(performance.now() - changedAt);
    else missed += 1;
  }
  return { latenciesMs, missed };
}

/**
 * `samples` score changes in the sandbox, one every `intervalMs` whatever happened to the earlier ones, each on
 * the next of `slugs` (linked ones); each is timed until its record shows the new score.
 */
async function changesApart(
  system: LocalSystem,
  linked: WebhookSystemReady['linked'],
  args: { samples: number; intervalMs: number; slugs: string[]; perSampleTimeoutMs: number },
): Promise<EventToCrmResult> {
  const targets = linked.filter((l) => args.slugs.includes(l.slug));
  if (targets.length === 0) throw new Error('none of the given slugs is linked');
  const pending = new Map<number, { recordId: string; overall: number; changedAt: number }>();
  const latenciesMs: number[] = [];
  let missed = 0;
  const started = performance.now();
  let made = 0;
  while (made < args.samples || pending.size > 0) {
    const now = performance.now();
    if (made < args.samples && now >= started + made * args.intervalMs) {
      const target = targets[made % targets.length]!;
      // A record with a change still in flight is not changed again: each sample times one change.
      if (![...pending.values()].some((p) => p.recordId === target.recordId)) {
        const overall = nextScore(system.crm.record(target.recordId)?.score ?? null, made + 1_000);
        system.sandbox.updateReport(target.slug, { score: { overall } });
        pending.set(made, { recordId: target.recordId, overall, changedAt: performance.now() });
      }
      made += 1;
    }
    for (const [i, p] of pending) {
      if (system.crm.record(p.recordId)?.score === p.overall) {
        latenciesMs.push(performance.now() - p.changedAt);
        pending.delete(i);
      } else if (performance.now() - p.changedAt > args.perSampleTimeoutMs) {
        missed += 1;
        pending.delete(i);
      }
    }
    await sleep(POLL_MS);
  }
  return { latenciesMs, missed };
}

/** The compiled CLI beside this compiled child (dist/bench/children -> dist/src/cli). */
const CLI_BIN = fileURLToPath(new URL('../../src/cli/bin.js', import.meta.url));

/** utime + stime of a live process, from /proc (Linux); 0 when it cannot be read. */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at the state, field 3.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

/** USER_HZ: 100 on every Linux this bench runs on. */
const CLOCK_TICKS = 100;

function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/** Connector processes started by `launch`, with the tail of what they logged (for a failure's message). */
class Launched {
  private readonly children: { child: ChildProcess; log: string; exited: Promise<void> }[] = [];

  spawn(cli: string, args: string[], env: Record<string, string>, nodeArgs: string[]): void {
    const cwd = mkdtempSync(join(tmpdir(), 'rc-storm-'));
    const child = spawn(process.execPath, [...nodeArgs, cli, ...args], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const entry = { child, log: '', exited: new Promise<void>((r) => child.once('exit', () => r())) };
    const keep = (chunk: Buffer) => {
      entry.log = (entry.log + chunk.toString('utf8')).slice(-20_000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.children.push(entry);
  }

  /** CPU seconds of the first launched process (the server) and of the rest with their children. */
  cpu(): { server: number; others: number } {
    const [server, ...rest] = this.children.map((c) => c.child.pid ?? -1);
    if (server === undefined) return { server: 0, others: 0 };
    const others = [...rest, ...rest.flatMap(childPids), ...childPids(server)];
    return { server: cpuSeconds(server), others: others.reduce((a, pid) => a + cpuSeconds(pid), 0) };
  }

  /** Throws with the logs when one has exited. */
  check(): void {
    for (const c of this.children) {
      if (c.child.exitCode !== null || c.child.signalCode !== null)
        throw new Error(`a connector process exited early: ${c.log.slice(-3_000)}`);
    }
  }

  async stop(): Promise<void> {
    const all = this.children.splice(0);
    for (const c of all) c.child.kill('SIGTERM');
    await Promise.all(
      all.map(async (c) => {
        const timer = setTimeout(() => c.child.kill('SIGKILL'), 30_000);
        await c.exited;
        clearTimeout(timer);
      }),
    );
  }
}

async function launch(
  system: LocalSystem,
  launched: Launched,
  mode: ConnectorMode,
  cpuProfDir: string | undefined,
  cli: string = CLI_BIN,
): Promise<{ appUrl: string }> {
  await launched.stop();
  for (const w of system.workers.splice(0)) await w.close();
  const port = await freePort();
  const appUrl = `http://127.0.0.1:${port}`;
  const secret = system.ctx.config.reports.webhookSecrets[0]!;
  const env = workerEnvFor(system, {
    PORT: String(port),
    APP_URL: appUrl,
    REPORTS_WEBHOOK_SECRET: secret,
    LOG_LEVEL: 'warn',
  });
  const nodeArgs = cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', cpuProfDir] : [];
  launched.spawn(cli, [mode], env, nodeArgs);
  if (mode === 'serve') launched.spawn(cli, ['worker'], env, nodeArgs);
  // Ready as the operator's probe says (the server answers, Redis with it), and every queue has a worker: the
  // probe no longer waits for workers, so the bench asks Redis itself.
  await pollUntil(
    `the connector (${mode}) to be ready`,
    async () => {
      launched.check();
      try {
        const res = await fetch(`${appUrl}/readyz`);
        if (res.status !== 200) return undefined;
      } catch {
        return undefined;
      }
      const workers = await Promise.all(system.ctx.queues.all().map((q) => q.getWorkersCount()));
      return workers.every((n) => n > 0) ? true : undefined;
    },
    60_000,
    100,
  );
  system.sandbox.configureWebhook(`${appUrl}/webhooks/reports`, secret);
  return { appUrl };
}

await serveRpc<WebhookSystemProtocol, WebhookSystemConfig, WebhookSystemReady>(async (config) => {
  const system = await startLocalSystem({
    companies: config.companies,
    prefix: config.prefix,
    redisUrl: config.redisUrl,
    workers: config.workers,
    logLevel: config.logLevel,
    sandboxRateLimitPerMinute: config.sandboxRatePerMinute ?? REPORTS_PER_MINUTE,
    // Paced to the sandbox's limit, as an operator who knows the limit would set it (the default is 600).
    env: {
      ...(config.connectorRatePerMinute === null
        ? {}
        : { REPORTS_RATE_PER_MINUTE: String(config.connectorRatePerMinute ?? REPORTS_PER_MINUTE) }),
      // As an operator sets it: every connection of the process goes to the cluster, none to `redisUrl`.
      ...(config.clusterNodes ? { REDIS_CLUSTER_NODES: config.clusterNodes } : {}),
    },
  });
  try {
    // The first backfill links the records; the bench starts on a settled system.
    await pollUntil(
      'the first backfill to finish',
      async () => {
        const [run] = await system.ctx.runs.recent(system.installationId, 1);
        return run && (run.state === 'done' || run.state === 'stopped') ? run : undefined;
      },
      config.timeoutMs,
    );
    await drain(system, config.timeoutMs);
  } catch (err) {
    await system.close();
    throw err;
  }

  const bySlug = new Map<string, string>();
  for (const id of system.recordIds) {
    const record = system.crm.record(id);
    if (record?.status === 'matched' && record.slug && !bySlug.has(record.slug)) bySlug.set(record.slug, id);
  }
  const linked = [...bySlug].map(([slug, recordId]) => ({ slug, recordId }));
  if (linked.length === 0) {
    await system.close();
    throw new Error('the first backfill linked no record, so no score change can be followed');
  }
  const launched = new Launched();
  const secret = system.ctx.config.reports.webhookSecrets[0];
  if (!secret) {
    await system.close();
    throw new Error('the local system has no webhook secret');
  }

  return {
    ready: {
      appUrl: system.appUrl,
      secret,
      slugs: system.sandbox
        .listReports()
        .filter((r) => r.published)
        .map((r) => r.slug),
      linked,
    },
    handlers: {
      outcomes: () => outcomes(system),
      drain: ({ timeoutMs, settle }) => drain(system, timeoutMs, settle),
      eventToCrm: ({ samples, perSampleTimeoutMs }) =>
        eventToCrm(system, linked, samples, perSampleTimeoutMs),
      changesApart: (args) => changesApart(system, linked, args),
      nodes: ({ keys }) => nodeFigures(system, keys),
      launch: ({ mode, cpuProfDir, cli }) => launch(system, launched, mode, cpuProfDir, cli),
      cpu: () => launched.cpu(),
      halt: async () => {
        await launched.stop();
        return null;
      },
      trace: async ({ slug }) => {
        const target = linked.find((l) => l.slug === slug)!;
        const overall = nextScore(system.crm.record(target.recordId)?.score ?? null, 4242);
        const { redis, keys } = system.ctx;
        const inst = jobIdPart(system.installationId);
        const realtimeKey = `${keys.queuePrefix('realtime')}:realtime:de:slug-${inst}-${jobIdPart(slug)}`;
        const backfillKey = `${keys.queuePrefix('backfill')}:backfill:de:slug-${inst}-${jobIdPart(slug)}`;
        const seen: Record<string, number> = {};
        const t0 = performance.now();
        const note = (stage: string) => {
          if (seen[stage] === undefined) seen[stage] = Math.round(performance.now() - t0);
        };
        system.sandbox.updateReport(slug, { score: { overall } });
        while (performance.now() - t0 < 30_000) {
          if ((await redis.zscore(keys.scoreInboxOrder(), slug)) !== null) note('marked');
          else if (seen.marked !== undefined) note('taken');
          if (await redis.exists(realtimeKey)) note('realtime job');
          if (await redis.exists(backfillKey)) note('backfill job');
          const drains = (await system.ctx.queues.realtime.getJobs(['active', 'waiting', 'delayed'])).filter(
            (j) => j.name === 'score-changes',
          );
          for (const j of drains) note(`drain ${await j.getState()}`);
          if (drains.length === 0 && seen.marked !== undefined && seen.taken === undefined) note('no drain');
          if ((await redis.exists(keys.scoreInboxKick())) === 0) note('no kick');
          if (system.crm.record(target.recordId)?.score === overall) {
            note('in the CRM');
            break;
          }
          await sleep(2);
        }
        return seen;
      },
      backlog: async () => ({
        ...(await system.ctx.queues.realtime.getJobCounts('waiting', 'prioritized', 'active', 'delayed')),
        inbox: await system.ctx.redis.zcard(system.ctx.keys.scoreInboxOrder()),
      }),
      work: () => ({
        reportRequests: system.sandbox.requestCount(),
        crmWriteCalls: system.hubspot.stats().calls['companies.batchUpdate'] ?? 0,
      }),
    },
    close: async () => {
      await launched.stop();
      await system.close();
    },
  };
});
