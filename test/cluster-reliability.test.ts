import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSystem } from '../local/system.js';
import { staleRecords } from './support/end-state.js';
import { wrongRecords } from './support/expectations.js';
import { startTestSystem, stopTestSystem } from './support/local-system.js';
import { measured } from './support/measured.js';
import { LocalRedisCluster } from './support/redis-cluster.js';
import { ScoreVersions } from './support/score-versions.js';
import { failedJobs, queuesIdle, runEnded, runOf } from './support/system-state.js';
import { waitFor } from './support/wait.js';
import { buildWorkerCli, sharedSecretsEnv, WorkerProcess, workerEnvFor } from './support/worker-process.js';

/**
 * The reliability cases that matter on a Redis Cluster of three masters with one replica each, while the
 * sandbox re-scores reports during the backfill: worker processes SIGKILLed mid-backfill, and every master
 * failing over to its replica (CLUSTER FAILOVER, one after another) mid-backfill. Each must end with every
 * record right, nothing written from an older report read after a newer one, and no job failed.
 */

const COMPANIES = 600;
const CHANGED_SLUGS = 6;
const CHANGE_EVERY_MS = 300;
const MAX_VERSIONS = 15;

let cluster: LocalRedisCluster;
let bin: string;
const systems: LocalSystem[] = [];
const processes: WorkerProcess[] = [];

beforeAll(async () => {
  [cluster, bin] = await Promise.all([
    LocalRedisCluster.start({ masters: 3, replicasPerMaster: 1 }),
    buildWorkerCli(),
  ]);
}, 180_000);

afterAll(async () => {
  await Promise.all(processes.map((p) => p.kill()));
  for (const system of systems) await stopTestSystem(system);
  await cluster?.stop();
});

async function slowSystem(workers: number): Promise<{ system: LocalSystem; versions: ScoreVersions }> {
  const system = await startTestSystem({
    companies: COMPANIES,
    workers,
    env: { ...sharedSecretsEnv(), REDIS_CLUSTER_NODES: cluster.nodesEnv },
  });
  systems.push(system);
  // Slow enough that the backfill lasts several seconds: kills, failovers and score changes land inside it.
  system.hubspot.injectFaults({ latencyMs: 150 });
  system.sandbox.setFaults({ delayMs: 15 });
  const slugs = [
    ...new Set(system.seed.flatMap((c) => (c.expected.status === 'matched' ? [c.expected.slug] : []))),
  ].slice(0, CHANGED_SLUGS);
  return { system, versions: new ScoreVersions(system.sandbox, slugs) };
}

/**
 * Drives the backfill to its end: re-scores the changed reports every CHANGE_EVERY_MS until half the records
 * are done, and calls `at` with the records done so far on each turn (it does the kills and failovers).
 */
async function backfillWhile(
  system: LocalSystem,
  versions: ScoreVersions,
  at: (recordsDone: number, state: string | undefined) => Promise<void>,
): Promise<void> {
  const deadline = Date.now() + 180_000;
  let lastChange = 0;
  for (;;) {
    const run = await runOf(system);
    if (run?.state === 'done' || run?.state === 'stopped') break;
    if (Date.now() > deadline) throw new Error(`the backfill did not end in time: ${JSON.stringify(run)}`);
    const done = run?.totals.records ?? 0;
    if (
      done < COMPANIES / 2 &&
      versions.versionCount < MAX_VERSIONS &&
      Date.now() - lastChange >= CHANGE_EVERY_MS
    ) {
      versions.bumpAll();
      lastChange = Date.now();
    }
    await at(done, run?.state);
    await sleep(50);
  }
  await system.sandbox.waitForDeliveries();
  await queuesIdle(system, 120_000);
  versions.finish();
  await system.sandbox.waitForDeliveries();
  await queuesIdle(system, 120_000);
}

function backwardWrites(system: LocalSystem, versions: ScoreVersions): string[] {
  const changed = new Set(versions.slugs);
  return system.recordIds.flatMap((id) => {
    const slug = system.hubspot.getCompany(id)?.properties.report_slug;
    return slug && changed.has(slug) ? versions.backwardWrites(system.hubspot, id, slug) : [];
  });
}

async function expectRightEndState(system: LocalSystem, versions: ScoreVersions, context: string) {
  const run = await runEnded(system);
  expect(run.state, context).toBe('done');
  expect(run.recordsListed, context).toBe(COMPANIES);
  expect(run.totals.failed, context).toBe(0);
  expect(wrongRecords(system), context).toEqual([]);
  expect(staleRecords(system), context).toEqual([]);
  expect(backwardWrites(system, versions), context).toEqual([]);
  expect(await failedJobs(system), context).toBe(0);
  expect(versions.versionCount, context).toBeGreaterThanOrEqual(3);
}

describe('on a Redis Cluster (three masters, one replica each)', () => {
  it('both worker processes SIGKILLed mid-backfill and replaced: every record right', async () => {
    const { system, versions } = await slowSystem(0);
    const env = workerEnvFor(system);
    const pool: WorkerProcess[] = [];
    const startOne = async () => {
      const worker = await WorkerProcess.start(bin, env);
      processes.push(worker);
      pool.push(worker);
    };
    await startOne();
    await startOne();
    // Both at once, once the first batch is written: their jobs are taken up again only after their locks
    // lapse (BullMQ's stalled check), and killing them together keeps that wait to one.
    const kills: { recordsDone: number; pid: number }[] = [];
    await backfillWhile(system, versions, async (done) => {
      if (kills.length > 0 || done === 0) return;
      for (const victim of pool.splice(0)) {
        kills.push({ recordsDone: done, pid: victim.pid });
        await victim.kill();
      }
      await startOne();
      await startOne();
    });
    const context = `kills ${JSON.stringify(kills)}`;
    expect(kills, context).toHaveLength(2);
    expect(kills[0]!.recordsDone, context).toBeLessThan(COMPANIES);
    await expectRightEndState(system, versions, context);
    measured('cluster-worker-kill', { kills, versions: versions.versionCount });
  }, 300_000);

  it('every master fails over to its replica mid-backfill: nothing lost, nothing stale', async () => {
    const { system, versions } = await slowSystem(0);
    // Started only now, after the slow-down, and two batches at a time: the six batches take three rounds,
    // long enough for three failovers (a run's totals move only when a batch ends, so time is the trigger).
    await system.ctx.startWorkers({ backfill: 2 });
    const before = await cluster.topology();
    expect(before).toHaveLength(3);
    const failovers: { recordsDone: number; from: number; to: number; ms: number }[] = [];
    let processingSince = 0;
    await backfillWhile(system, versions, async (done, state) => {
      if (state !== 'processing' || failovers.length === before.length) return;
      processingSince ||= Date.now();
      // One failover every 600 ms of the batches' processing.
      if (Date.now() - processingSince < failovers.length * 600) return;
      const shard = before[failovers.length]!;
      const replica = shard.replicas[0]!;
      const started = Date.now();
      // A manual failover: the replica catches up with its master, then takes its slots over.
      await cluster.command(replica, ['CLUSTER', 'FAILOVER']);
      await waitFor(
        `port ${replica} to become a master`,
        async () => ((await cluster.topology()).some((s) => s.master === replica) ? true : undefined),
        30_000,
        50,
      );
      await cluster.waitHealthy();
      failovers.push({ recordsDone: done, from: shard.master, to: replica, ms: Date.now() - started });
    });
    const context = `failovers ${JSON.stringify(failovers)}`;
    expect(failovers, context).toHaveLength(3);
    const after = await cluster.topology();
    expect(after.map((s) => s.master).sort(), context).toEqual(failovers.map((f) => f.to).sort());
    await expectRightEndState(system, versions, context);
    measured('cluster-failover', { failovers, versions: versions.versionCount });
  }, 300_000);
});
