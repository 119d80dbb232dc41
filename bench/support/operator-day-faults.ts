import { createWriteStream, existsSync, mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { LocalSystem } from '../../local/system.js';
import { crmKind } from '../../src/providers.js';
import { identityOf } from '../../src/ratelimit/redis-gate.js';
import { deleteKeysWithPrefix } from '../../src/redis.js';
import { gateKeys } from '../../src/storage/keys.js';
import { OwnRedisServer } from '../../test/support/own-redis.js';
import { LocalRedisCluster } from '../../test/support/redis-cluster.js';
import { seededRandom } from '../../test/support/seeded-random.js';
import { sharedSecretsEnv, WorkerProcess, workerEnvFor } from '../../test/support/worker-process.js';
import {
  type LatencySummary,
  type LinkedLatencySummary,
  ScoreEventSender,
  type SentEvent,
  summarizeLinked,
  summarizeStrict,
} from './operator-day-events.js';
import type { Setting } from './operator-day-normal.js';
import {
  bulkJobs,
  firstWriteWatch,
  type OperatorDayOptions,
  operatorDay,
  runsSince,
  settle,
  startOperatorSystem,
  writeCallSizes,
} from './operator-day-setup.js';

/**
 * The operator day under faults (issue 30): the same install, reconcile and `sync --wait`, on a Redis of its
 * own (append-only, fsync always), with `report-connector worker` processes SIGKILLed every 5-10 s and
 * replaced, Redis SIGKILLed and restarted once, the report service at 10 requests a second with 5% 503, and a
 * real score change with its signed `score.changed` every 700 ms. Measures the time to the first CRM write,
 * acknowledged events lost, and event-to-CRM latency during the faults, after them while the backfill runs,
 * and after the backfill, on the records linked when each event was sent and strictly on every record the
 * seed links (operator-day-events.ts). On the 'cluster' setting the Redis of its own is a 3-master Redis Cluster
 * without replicas (append-only, fsync always, on every node), and the Redis restart kills every master at once
 * and starts them again: a real outage, as on one Redis, not a failover.
 */

export interface FaultOptions {
  workers: number;
  workerKills: number;
  /** Seconds between kills, drawn from this range. */
  killEveryMs: [number, number];
  redisOutageMs: number;
  eventEveryMs: number;
  reportsPerSecond: number;
  failShare: number;
  /** Events keep coming this long after the backfill ended. */
  afterBackfillMs: number;
  timeoutMs: number;
  /**
   * Kill workers until this long has passed since the first kill's wait began, whatever `workerKills` says
   * (the Redis fault then comes at half of it); null: `workerKills` kills.
   */
  faultForMs: number | null;
  /**
   * 'restart': Redis (every master of a cluster) SIGKILLed and started again; 'failover' (cluster only): a
   * cluster with a replica per master, the master serving the backfill queue SIGKILLed, its replica promoted,
   * the killed node started again (it comes back as a replica).
   */
  redisFault: 'restart' | 'failover';
  /** After the faults, how long the end state is waited for at most (the runs, every record's status). */
  observeAfterFaultsMs: number | null;
  /** Where every worker's whole log is written (one file each), or null. */
  logDir: string | null;
  /**
   * With `faultForMs`: 'kill' counts the 5-10 s from kill to kill (a replacement still starting is not killed);
   * 'running' from the replacement's "worker running", so one worker always ran for 5-10 s.
   */
  killPace: 'kill' | 'running';
}

/** The liveness preset: the fault run of the liveness Done-when (kills for 3 minutes, a failover on the cluster). */
export const LIVENESS_DEFAULTS: Partial<FaultOptions> = {
  faultForMs: 180_000,
  redisFault: 'failover',
  observeAfterFaultsMs: 150_000,
  afterBackfillMs: 10_000,
  timeoutMs: 10 * 60_000,
  killPace: 'kill',
};

/** The liveness bounds: no 30 s without a CRM write while records remain, every record at its end state 60 s after. */
export const LIVENESS_BOUNDS = { writeGapMs: 30_000, endStateAfterFaultsMs: 60_000 } as const;

export const FAULT_DEFAULTS: FaultOptions = {
  workers: 2,
  workerKills: 7,
  killEveryMs: [5_000, 10_000],
  redisOutageMs: 1_500,
  eventEveryMs: 700,
  reportsPerSecond: 10,
  failShare: 0.05,
  afterBackfillMs: 15_000,
  timeoutMs: 6 * 60_000,
  faultForMs: null,
  redisFault: 'restart',
  observeAfterFaultsMs: null,
  logDir: null,
  killPace: 'running',
};

/** What the liveness bounds look at: CRM writes, every record's status, and the workers' logs. */
export interface LivenessFigures {
  /** The Redis fault as done ('restart' of one Redis or every master, or 'failover' of one master). */
  redisFault: string;
  /** CRM write calls seen (record writes and bulk jobs). */
  writeCalls: number;
  /** Longest stretch without a CRM write from the day's start while a record had no status, and when it began. */
  longestWriteGapS: number;
  longestWriteGapFromS: number;
  /** Longest stretch in which no record gained a status while some had none. */
  longestStatusGapS: number;
  longestStatusGapFromS: number;
  /** When every record had a status (from the day's start), or null if never within the watch. */
  allStatusS: number | null;
  /** Records without a status at the watch's end. */
  withoutStatusAtEnd: number;
  /**
   * Seconds from the faults' end until every record has a status and every acknowledged event sent during the
   * faults holds on every record the seed links to its slug (0 when that was so already); null: never.
   */
  endStateAfterFaultsS: number | null;
  /** Worker log lines: jobs failed for exhausting their stalled count, commands timed out, revivals, stall warnings. */
  logs: { stalledLimit: number; timedOut: number; revived: number; runStall: number; laneStall: number };
  /** Failed jobs in the queues at the end (name, id, reason), for a run that did not converge. */
  failedAtEnd: string[];
  /** Median seconds from a worker's spawn to its "worker running" (module loading on a loaded machine). */
  workerStartMedianS: number;
  /** Seconds of the faults without any worker running, and the longest such stretch. */
  noWorkerSeconds: number;
  longestNoWorkerS: number;
  /** Seconds of the longest write gap during which no worker ran. */
  noWorkerInLongestWriteGapS: number;
}

interface WorkerLife {
  spawnedAt: number;
  runningAt: number | null;
  killedAt: number | null;
}

/** When no worker ran (between the day's start and the faults' end), against the longest write gap. */
function noWorkerFigures(
  lifes: WorkerLife[],
  from: number,
  until: number,
  writeTimes: number[],
): Pick<
  LivenessFigures,
  'workerStartMedianS' | 'noWorkerSeconds' | 'longestNoWorkerS' | 'noWorkerInLongestWriteGapS'
> {
  const up = lifes
    .filter((l) => l.runningAt !== null)
    .map((l) => [l.runningAt!, l.killedAt ?? Number.POSITIVE_INFINITY] as const)
    .sort((a, b) => a[0] - b[0]);
  // The stretches without a running worker, from the day's start to the faults' end.
  const gaps: [number, number][] = [];
  let cursor = from;
  for (const [a, b] of up) {
    if (a > cursor) gaps.push([cursor, Math.min(a, until)]);
    cursor = Math.max(cursor, b);
    if (cursor >= until) break;
  }
  if (cursor < until) gaps.push([cursor, until]);
  const real = gaps.filter(([a, b]) => b > a);
  const starts = lifes
    .filter((l) => l.runningAt !== null)
    .map((l) => l.runningAt! - l.spawnedAt)
    .sort((a, b) => a - b);
  // The longest write gap over the same span.
  const points = [from, ...writeTimes.filter((t) => t > from && t < until), until];
  let gap: [number, number] = [from, from];
  for (let i = 1; i < points.length; i++)
    if (points[i]! - points[i - 1]! > gap[1] - gap[0]) gap = [points[i - 1]!, points[i]!];
  const overlap = real.reduce(
    (sum, [a, b]) => sum + Math.max(0, Math.min(b, gap[1]) - Math.max(a, gap[0])),
    0,
  );
  return {
    workerStartMedianS: (starts[Math.floor(starts.length / 2)] ?? 0) / 1000,
    noWorkerSeconds: real.reduce((sum, [a, b]) => sum + (b - a), 0) / 1000,
    longestNoWorkerS: real.reduce((m, [a, b]) => Math.max(m, b - a), 0) / 1000,
    noWorkerInLongestWriteGapS: overlap / 1000,
  };
}

/** One window of events, both measures. */
export interface WindowLatency {
  linked: LinkedLatencySummary;
  strict: LatencySummary;
}

export interface FaultFigures {
  setting: Setting;
  workerKills: number;
  redisRestartAtS: number;
  redisOutageMs: number;
  /** From the SIGKILL until Redis (every master of a cluster, the cluster ok again) served again. */
  redisDownMs: number;
  faultSeconds: number;
  firstWriteSeconds: number | null;
  backfillSeconds: number | null;
  timeoutSeconds: number;
  runsText: string;
  events: { sent: number; acknowledged: number; lost: number };
  latency: {
    duringFaults: WindowLatency;
    afterFaultsDuringBackfill: WindowLatency;
    afterBackfill: WindowLatency;
  };
  reportCalls: number;
  reportLimited: number;
  reportFailed: number;
  reportSpanSeconds: number;
  liveness: LivenessFigures;
}

const WORKER_BIN = fileURLToPath(new URL('../../src/cli/bin.js', import.meta.url));

export async function measureFaults(
  setting: Setting,
  base: Omit<OperatorDayOptions, 'crm' | 'clusterNodes' | 'redisUrl' | 'workers'>,
  f: FaultOptions,
  syncAfterMs: number,
  say: (line: string) => void,
): Promise<FaultFigures> {
  if (!existsSync(WORKER_BIN))
    throw new Error(`${WORKER_BIN} is missing: run the bench with \`npm run bench:operator-day\``);
  const failover = setting === 'cluster' && f.redisFault === 'failover';
  const redis = setting === 'cluster' ? await ownCluster(failover) : await ownRedis();
  const workers: WorkerProcess[] = [];
  const logs = new WorkerLogs(f.logDir);
  let system: LocalSystem | undefined;
  try {
    system = await startOperatorSystem({
      ...base,
      crm: crmKind(setting === 'salesforce' ? 'salesforce' : 'hubspot'),
      redisUrl: redis.url,
      ...(redis.clusterNodes ? { clusterNodes: redis.clusterNodes } : {}),
      workers: 0,
      reportsPerSecond: f.reportsPerSecond,
      failShare: f.failShare,
      env: { ...base.env, ...sharedSecretsEnv() },
    });
    const sys = system;
    backfillQueueKey = sys.ctx.queues.backfill.toKey('meta');
    const env = workerEnvFor(sys, { LOG_LEVEL: 'info' });
    // Each worker's spawn and "running" times: on a loaded machine a replacement takes seconds to start.
    const workerStarts: WorkerLife[] = [];
    const lives = new Map<WorkerProcess, WorkerLife>();
    const startWorker = async () => {
      const entry: WorkerLife = { spawnedAt: Date.now(), runningAt: null, killedAt: null };
      workerStarts.push(entry);
      const w = await WorkerProcess.start(WORKER_BIN, env, logs.sink());
      entry.runningAt = Date.now();
      lives.set(w, entry);
      return w;
    };
    for (let i = 0; i < f.workers; i++) workers.push(await startWorker());

    const watch = firstWriteWatch(sys, Date.now());
    const progressWatch = new ProgressWatch(sys);
    const day = await operatorDay(sys, syncAfterMs);
    progressWatch.start(day.startedAt);
    day.cliSync.catch(() => {});
    const at = (t: number) => (t - day.startedAt) / 1000;

    const sender = new ScoreEventSender(sys, f.eventEveryMs, 'msg_day');
    const { events } = sender;
    sender.start();

    // Every 10 s on stderr: the key's answers (429s) and the CRM's writes so far, to see where progress stalls.
    const gate = gateKeys(sys.ctx.keys.reportsGate(identityOf(sys.ctx.config.reports.apiKey ?? '')));
    const timeline = setInterval(() => {
      void (async () => {
        const answers = sys.sandbox.answerCounts().byStatus;
        const total = Object.values(answers).reduce((a, b) => a + b, 0);
        const writes = writeCallSizes(sys);
        const { redis } = sys.ctx;
        const [iv, pause, urgent] = await Promise.all([
          redis.hget(gate.rate, 'iv'),
          redis.pttl(gate.pause),
          redis.pttl(gate.urgent),
        ]);
        const q = (await sys.ctx.queues.counts()).backfill;
        say(
          `  ${at(Date.now()).toFixed(0)} s: report answers ${total} (429: ${answers['429'] ?? 0}), ` +
            `CRM write calls ${writes.length} (${writes.reduce((a, b) => a + b, 0)} records), events ${events.length}; ` +
            `key ${iv ? (60_000 / Number(iv)).toFixed(0) : 'ceiling'}/min, pause ${pause} ms, urgent mark ${urgent} ms; ` +
            `backfill queue active ${q.active} waiting ${q.waiting} delayed ${q.delayed}; ` +
            `records without a status ${progressWatch.withoutStatus()}`,
        );
        // Nothing written for 10 s: what the lanes hold, to tell a stall's cause from the state it leaves.
        const lastWrite = progressWatch.writeTimes.at(-1) ?? day.startedAt;
        if (Date.now() - lastWrite >= 10_000)
          say(
            `    no write for ${((Date.now() - lastWrite) / 1000).toFixed(0)} s: ${await laneState(sys, workerStarts)}`,
          );
      })().catch((err: Error) => say(`  timeline: ${err.message}`));
    }, 10_000);

    // The faults: worker kills every 5-10 s (each replaced at once), Redis killed and restarted once midway.
    const random = seededRandom(30);
    let kills = 0;
    let redisRestartAt = 0;
    let redisBackAt = 0;
    const killedAt: number[] = [];
    const faultsFrom = Date.now();
    const more = () =>
      f.faultForMs === null ? kills < f.workerKills : Date.now() - faultsFrom < f.faultForMs;
    const redisDue = () =>
      f.faultForMs === null
        ? kills === Math.floor(f.workerKills / 2)
        : Date.now() - faultsFrom >= f.faultForMs / 2;
    // With `faultForMs` the kills keep their pace from kill to kill, each replacement starting meanwhile (on a
    // loaded machine a worker takes seconds to start); a worker still starting is not the one killed.
    const paced = f.faultForMs !== null && f.killPace === 'kill';
    const starting: (Promise<WorkerProcess> | null)[] = workers.map(() => null);
    let lastKillAt = Date.now();
    while (more()) {
      const [lo, hi] = f.killEveryMs;
      const wait = lo + Math.floor(random() * (hi - lo));
      await sleep(paced ? Math.max(0, lastKillAt + wait - Date.now()) : wait);
      if (redisDue() && redisRestartAt === 0) {
        redisRestartAt = Date.now();
        if (failover) {
          say(`  ${at(Date.now()).toFixed(0)} s: ${redis.failoverName} SIGKILL, its replica to take over`);
          await redis.failover();
          redisBackAt = Date.now();
          say(
            `  ${at(redisBackAt).toFixed(1)} s: replica promoted, the cluster ok; the killed node restarted`,
          );
        } else {
          say(`  ${at(Date.now()).toFixed(0)} s: ${redis.name} SIGKILL, restart after ${f.redisOutageMs} ms`);
          await redis.kill();
          await sleep(f.redisOutageMs);
          await redis.start();
          redisBackAt = Date.now();
          say(`  ${at(redisBackAt).toFixed(1)} s: ${redis.name} back`);
        }
      }
      let i = Math.floor(random() * workers.length);
      if (starting[i]) {
        const running = starting.findIndex((p) => p === null);
        if (running >= 0) i = running;
        else await Promise.race(starting.map((p) => p?.catch(() => {})));
        if (starting[i]) i = starting.findIndex((p) => p === null);
      }
      await workers[i]!.kill();
      lastKillAt = Date.now();
      const life = lives.get(workers[i]!);
      if (life) life.killedAt = lastKillAt;
      killedAt.push(lastKillAt);
      kills += 1;
      say(
        `  ${at(Date.now()).toFixed(0)} s: worker ${i} SIGKILLed (${kills}${f.faultForMs === null ? ` of ${f.workerKills}` : ''})`,
      );
      if (!paced) {
        workers[i] = await startWorker();
        continue;
      }
      const slot = i;
      const next = startWorker();
      starting[slot] = next;
      next.then(
        (w) => {
          workers[slot] = w;
          starting[slot] = null;
        },
        (err: Error) => {
          // The slot stays with its dead worker (killing it again does nothing); the next kill starts another.
          starting[slot] = null;
          say(`  worker ${slot} did not start: ${err.message}`);
        },
      );
    }
    // The last replacements, so that the end state is waited for with every worker running.
    for (const [slot, p] of starting.entries()) if (p) workers[slot] = await p.catch(() => workers[slot]!);
    const faultsEndAt = Date.now();
    say(`  ${at(faultsEndAt).toFixed(0)} s: faults over; waiting for the backfill`);

    let backfillEndAt: number | null = null;
    const settleBy = Math.min(
      day.startedAt + f.timeoutMs,
      f.observeAfterFaultsMs === null ? Number.POSITIVE_INFINITY : faultsEndAt + f.observeAfterFaultsMs,
    );
    try {
      const { settledAt } = await settle(sys, day.startedAt, settleBy - Date.now(), {
        runsOnly: true,
      });
      backfillEndAt = settledAt;
      say(`  ${at(settledAt).toFixed(0)} s: backfill settled`);
    } catch (err) {
      say(`  backfill: ${(err as Error).message}`);
    }
    if (backfillEndAt !== null) await sleep(f.afterBackfillMs);
    // Every record's status, until the watch's end: a run may end with records still to be written.
    if (f.observeAfterFaultsMs !== null) {
      const by = faultsEndAt + f.observeAfterFaultsMs;
      while (Date.now() < by && progressWatch.withoutStatus() > 0) await sleep(500);
    }
    // The last events' time to land, then whatever has not is lost.
    await sender.stop();
    clearInterval(timeline);
    const firstWriteMs = watch.stop();
    const progressSeen = progressWatch.stop();
    const failedAtEnd = await failedJobs(sys).catch((err: Error) => [`(not read: ${err.message})`]);
    for (const line of failedAtEnd) say(`  failed at the end: ${line}`);
    const duringFaultsAcked = events.filter((e) => e.sentAt < faultsEndAt && e.ackAt !== null);
    const landedBy = duringFaultsAcked.some((e) => e.landedAt === null)
      ? null
      : Math.max(faultsEndAt, ...duringFaultsAcked.map((e) => e.landedAt!));
    const endStateAt =
      landedBy === null || progressSeen.allStatusAt === null
        ? null
        : Math.max(landedBy, progressSeen.allStatusAt, faultsEndAt);
    const runs = await runsSince(sys, day.startedAt);
    const answers = sys.sandbox.answerCounts();
    const end = backfillEndAt ?? Number.POSITIVE_INFINITY;
    // The events on linked records that missed 3 s, one by one, beside the kill before them: enough to tell a
    // killed holder's record leases (LOCK_LEASE_MS) or fill locks from a lane that stalled, without a second
    // run. Events whose slug had no linked record yet land with the backfill (the strict rows) and are left out.
    for (const e of events.filter((e) => e.linkedIds.length > 0)) {
      const landed = e.landedLinkedAt;
      if (landed !== null && landed - e.sentAt <= 3_000) continue;
      const killBefore = killedAt.filter((k) => k <= e.sentAt).at(-1);
      say(
        `  slow event: ${e.slug} sent at ${at(e.sentAt).toFixed(1)} s ${e.sentAt >= faultsEndAt ? 'after' : 'during'} the faults ` +
          `(kill before it ${killBefore === undefined ? 'none' : `at ${at(killBefore).toFixed(1)} s`}, Redis restart at ${at(redisRestartAt).toFixed(1)} s), ` +
          `acknowledged ${e.ackAt === null ? 'never' : `at ${at(e.ackAt).toFixed(1)} s`}, on its ` +
          `${e.linkedIds.length} linked records ${landed === null ? 'never' : `at ${at(landed).toFixed(1)} s`}`,
      );
    }
    return {
      setting,
      workerKills: kills,
      redisRestartAtS: at(redisRestartAt),
      redisOutageMs: f.redisOutageMs,
      redisDownMs: redisBackAt - redisRestartAt,
      faultSeconds: at(faultsEndAt),
      firstWriteSeconds: firstWriteMs === null ? null : firstWriteMs / 1000,
      backfillSeconds: backfillEndAt === null ? null : at(backfillEndAt),
      timeoutSeconds: f.timeoutMs / 1000,
      runsText: runs
        .map((r) => `${r.kind} ${r.state}${r.stoppedReason ? ` [${r.stoppedReason}]` : ''}`)
        .join(', '),
      events: {
        sent: events.length,
        acknowledged: sender.acknowledged().length,
        lost: sender.lost(),
      },
      latency: {
        duringFaults: windowLatency(events.filter((e) => e.sentAt < faultsEndAt)),
        afterFaultsDuringBackfill: windowLatency(
          events.filter((e) => e.sentAt >= faultsEndAt && e.sentAt < end),
        ),
        afterBackfill: windowLatency(events.filter((e) => e.sentAt >= end)),
      },
      reportCalls: sys.sandbox.requestCount(),
      reportLimited: answers.byStatus['429'] ?? 0,
      reportFailed: answers.byStatus['503'] ?? 0,
      reportSpanSeconds:
        answers.firstAt !== null && answers.lastAt !== null ? (answers.lastAt - answers.firstAt) / 1000 : 0,
      liveness: {
        redisFault: failover ? 'failover' : 'restart',
        writeCalls: progressSeen.writeTimes.length,
        ...longestGap(
          day.startedAt,
          progressSeen.writeTimes,
          progressSeen.allStatusAt ?? progressSeen.stoppedAt,
          'Write',
        ),
        ...longestGap(
          day.startedAt,
          progressSeen.statusTimes,
          progressSeen.allStatusAt ?? progressSeen.stoppedAt,
          'Status',
        ),
        allStatusS: progressSeen.allStatusAt === null ? null : at(progressSeen.allStatusAt),
        withoutStatusAtEnd: progressSeen.withoutStatusAtEnd,
        endStateAfterFaultsS: endStateAt === null ? null : (endStateAt - faultsEndAt) / 1000,
        logs: logs.counts,
        failedAtEnd,
        ...noWorkerFigures(workerStarts, day.startedAt, faultsEndAt, progressSeen.writeTimes),
      },
    };
  } finally {
    await Promise.all(workers.map((w) => w.kill()));
    logs.close();
    if (system) {
      await redis.start();
      await system.close();
      await redis.clean(system.ctx.config.redisPrefix);
    }
    await redis.dispose();
  }
}

/** The fault phase's Redis of its own: one server, or every master of a cluster, killed and started together. */
interface FaultRedis {
  name: string;
  /** What `failover` kills. */
  failoverName: string;
  /**
   * Cluster with replicas only: SIGKILLs the master serving the backfill queue, waits until its replica took
   * over and the cluster is ok, then starts the killed node again (it rejoins as a replica).
   */
  failover(): Promise<void>;
  /** REDIS_URL; on a cluster, one node's (the connector must not use it there: it would be told MOVED). */
  url: string;
  /** REDIS_CLUSTER_NODES on a cluster. */
  clusterNodes: string | null;
  /** SIGKILL (every master of a cluster). */
  kill(): Promise<void>;
  /** Starts what is killed (reading the AOF back) and waits until it serves again; nothing when it runs. */
  start(): Promise<void>;
  /** Removes the bench's keys. */
  clean(prefix: string): Promise<void>;
  dispose(): Promise<void>;
}

async function ownRedis(): Promise<FaultRedis> {
  const server = new OwnRedisServer();
  await server.start();
  return {
    name: 'Redis',
    failoverName: 'Redis',
    failover: () => Promise.reject(new Error('one Redis has no replica to fail over to')),
    url: server.url,
    clusterNodes: null,
    kill: () => server.kill(),
    start: async () => {
      if (!server.running) await server.start();
    },
    clean: async (prefix) => {
      await deleteKeysWithPrefix(server.url, prefix);
    },
    dispose: () => server.dispose(),
  };
}

async function ownCluster(withReplicas: boolean): Promise<FaultRedis> {
  // Without replicas a restart is a real outage, as on one Redis; with one per master, a killed master's
  // replica takes over (a failover).
  const cluster = await LocalRedisCluster.start({
    masters: 3,
    replicasPerMaster: withReplicas ? 1 : 0,
    appendOnly: true,
  });
  const masters = (await cluster.topology()).map((s) => s.master);
  let failoverPort: number | null = null;
  return {
    name: 'every Redis Cluster master',
    get failoverName() {
      return `the Redis Cluster master serving the backfill queue${failoverPort ? ` (port ${failoverPort})` : ''}`;
    },
    failover: async () => {
      // The slot of BullMQ's backfill queue: its jobs' locks and stalled checks are what a failover times out.
      const slot = Number(await cluster.command(masters[0]!, ['CLUSTER', 'KEYSLOT', backfillQueueKey]));
      const shard = (await cluster.topology()).find((s) => s.slots.some(([a, b]) => slot >= a && slot <= b));
      if (!shard || shard.replicas.length === 0) throw new Error('no master with a replica serves the queue');
      failoverPort = shard.master;
      await cluster.kill(shard.master);
      await cluster.waitHealthy(60_000);
      await cluster.restart(shard.master);
    },
    url: `redis://127.0.0.1:${masters[0]}`,
    clusterNodes: cluster.nodesEnv,
    kill: async () => {
      await Promise.all(masters.map((port) => cluster.kill(port)));
    },
    start: async () => {
      if (cluster.stopped.length > 0) await cluster.restart(...cluster.stopped);
    },
    // The cluster is the bench's alone and goes with its folder.
    clean: async () => {},
    dispose: () => cluster.stop(),
  };
}

/** Set by `measureFaults` before any failover: a key of the backfill queue (its slot is the queue's). */
let backfillQueueKey = '';

/** Each lane's jobs (active ones named, with their age and stalled count), the score inbox's marks, worker starts. */
async function laneState(sys: LocalSystem, starts: WorkerLife[]): Promise<string> {
  const now = Date.now();
  const parts: string[] = [];
  for (const lane of ['backfill', 'realtime', 'schedule'] as const) {
    const queue = sys.ctx.queues[lane];
    const counts = await queue.getJobCounts('waiting', 'delayed', 'prioritized', 'failed');
    const active = await queue.getJobs(['active'], 0, 19, true);
    parts.push(
      `${lane}: waiting ${counts.waiting} prioritized ${counts.prioritized} delayed ${counts.delayed} failed ${counts.failed}, active [` +
        active
          .map(
            (j) =>
              `${j.name} ${String(j.id).slice(-14)} ${j.processedOn ? `${((now - j.processedOn) / 1000).toFixed(0)}s` : '?'} a${j.attemptsMade} stc${j.stalledCounter ?? 0}`,
          )
          .join('; ') +
        ']',
    );
  }
  const { redis, keys } = sys.ctx;
  const [kick, inboxType] = await Promise.all([
    redis.pttl(keys.scoreInboxKick()),
    redis.type(keys.scoreInboxOrder()),
  ]);
  const order =
    inboxType === 'zset'
      ? await redis.zcard(keys.scoreInboxOrder())
      : inboxType === 'list'
        ? await redis.llen(keys.scoreInboxOrder())
        : inboxType;
  const urgent = await redis.zcard(keys.pendingSlugs(sys.installationId, 'urgent')).catch(() => -1);
  const recent = starts
    .slice(-4)
    .map((w) =>
      w.runningAt === null
        ? `starting ${((now - w.spawnedAt) / 1000).toFixed(0)}s`
        : `up after ${((w.runningAt - w.spawnedAt) / 1000).toFixed(1)}s`,
    );
  parts.push(
    `score inbox marks ${order}, kick ${kick} ms; urgent pending ${urgent}; last worker starts: ${recent.join(', ')}`,
  );
  return parts.join(' | ');
}

/** The failed jobs of every queue at the end: name, id, attempts, reason. */
async function failedJobs(sys: LocalSystem): Promise<string[]> {
  const out: string[] = [];
  for (const lane of ['backfill', 'realtime', 'schedule'] as const) {
    const queue = sys.ctx.queues[lane];
    for (const job of await queue.getJobs(['failed'], 0, 49, false)) {
      out.push(`${lane} ${job.name} ${job.id} (attempts ${job.attemptsMade}): ${job.failedReason}`);
    }
  }
  return out;
}

/**
 * Samples the CRM's write counters every 50 ms (a write's time within 50 ms) and every record's status every
 * 500 ms, from the day's start: what the liveness bounds are read from.
 */
class ProgressWatch {
  readonly writeTimes: number[] = [];
  readonly statusTimes: number[] = [];
  private writes = 0;
  private withStatus = 0;
  private allStatusAt: number | null = null;
  private timers: NodeJS.Timeout[] = [];

  constructor(private readonly sys: LocalSystem) {}

  start(_since: number): void {
    this.timers.push(
      setInterval(() => {
        const n = writeCallSizes(this.sys).length + bulkJobs(this.sys);
        if (n > this.writes) this.writeTimes.push(Date.now());
        this.writes = n;
      }, 50),
      setInterval(() => this.sampleStatus(), 500),
    );
  }

  withoutStatus(): number {
    return this.sys.recordIds.length - this.withStatus;
  }

  private sampleStatus(): void {
    const n = this.sys.recordIds.filter((id) => this.sys.crm.record(id)?.status).length;
    const now = Date.now();
    if (n > this.withStatus) this.statusTimes.push(now);
    this.withStatus = n;
    if (this.allStatusAt === null && n === this.sys.recordIds.length) this.allStatusAt = now;
  }

  stop(): {
    writeTimes: number[];
    statusTimes: number[];
    allStatusAt: number | null;
    withoutStatusAtEnd: number;
    stoppedAt: number;
  } {
    for (const t of this.timers) clearInterval(t);
    this.sampleStatus();
    return {
      writeTimes: this.writeTimes,
      statusTimes: this.statusTimes,
      allStatusAt: this.allStatusAt,
      withoutStatusAtEnd: this.withoutStatus(),
      stoppedAt: Date.now(),
    };
  }
}

/** The longest stretch between `from`, the times given and `until` (each time after `from`). */
function longestGap<K extends string>(
  from: number,
  times: number[],
  until: number,
  name: K,
): Record<`longest${K}GapS` | `longest${K}GapFromS`, number> {
  const points = [from, ...times.filter((t) => t > from && t < until), until];
  let best = 0;
  let bestFrom = from;
  for (let i = 1; i < points.length; i++) {
    const gap = points[i]! - points[i - 1]!;
    if (gap > best) {
      best = gap;
      bestFrom = points[i - 1]!;
    }
  }
  return {
    [`longest${name}GapS`]: best / 1000,
    [`longest${name}GapFromS`]: (bestFrom - from) / 1000,
  } as Record<`longest${K}GapS` | `longest${K}GapFromS`, number>;
}

/**
 * Every worker's whole log (the processes' stderr), one file each under `dir` when given, and the count of
 * the lines the liveness bounds look for.
 */
class WorkerLogs {
  readonly counts = { stalledLimit: 0, timedOut: 0, revived: 0, runStall: 0, laneStall: 0 };
  private files: WriteStream[] = [];

  constructor(private readonly dir: string | null) {
    if (dir) mkdirSync(dir, { recursive: true });
  }

  sink(): (text: string) => void {
    const file = this.dir ? createWriteStream(join(this.dir, `worker-${this.files.length}.log`)) : null;
    if (file) this.files.push(file);
    let partial = '';
    return (text) => {
      file?.write(text);
      const lines = (partial + text).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) this.count(line);
    };
  }

  private count(line: string): void {
    const c = this.counts;
    if (line.includes('stalled more than allowable limit')) c.stalledLimit += 1;
    if (line.includes('Command timed out')) c.timedOut += 1;
    if (line.includes('queued again under a new id') || line.includes('its marks are queued again'))
      c.revived += 1;
    if (/sync run \S+: no progress for/.test(line)) c.runStall += 1;
    if (/lane \w+: no job done for/.test(line)) c.laneStall += 1;
  }

  close(): void {
    for (const f of this.files) f.end();
  }
}

function windowLatency(events: SentEvent[]): WindowLatency {
  return { linked: summarizeLinked(events), strict: summarizeStrict(events) };
}
