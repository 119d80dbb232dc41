import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSystem } from '../local/system.js';
import { backfillWhile, expectRightEndState, slowDown } from './support/cluster-backfill.js';
import { startTestSystem, stopTestSystem } from './support/local-system.js';
import { measured } from './support/measured.js';
import { LocalRedisCluster } from './support/redis-cluster.js';
import { waitFor } from './support/wait.js';
import { buildWorkerCli, sharedSecretsEnv, WorkerProcess, workerEnvFor } from './support/worker-process.js';

/**
 * A machine dies mid-backfill on a Redis Cluster of three masters with one replica each: both worker processes
 * and the master serving the installation's state are SIGKILLed at once, while the sandbox re-scores reports.
 * The replica takes over (cluster-node-timeout 2 s), new workers take the dead ones' jobs up once their locks
 * lapse, and the backfill must end with every record right, nothing written from an older report read after a
 * newer one, and no job failed for good.
 */

const COMPANIES = 600;

let cluster: LocalRedisCluster;
let bin: string;
let system: LocalSystem | undefined;
const processes: WorkerProcess[] = [];

beforeAll(async () => {
  [cluster, bin] = await Promise.all([
    LocalRedisCluster.start({ masters: 3, replicasPerMaster: 1 }),
    buildWorkerCli(),
  ]);
}, 180_000);

afterAll(async () => {
  await Promise.all(processes.map((p) => p.kill()));
  await stopTestSystem(system);
  await cluster?.stop();
});

describe('on a Redis Cluster (three masters, one replica each)', () => {
  it('both worker processes and a master SIGKILLed mid-backfill: every record right, nothing stale', async () => {
    system = await startTestSystem({
      companies: COMPANIES,
      workers: 0,
      env: { ...sharedSecretsEnv(), REDIS_CLUSTER_NODES: cluster.nodesEnv },
    });
    const running = system;
    const versions = slowDown(running);
    const env = workerEnvFor(running);
    const pool: WorkerProcess[] = [];
    const startOne = async () => {
      const worker = await WorkerProcess.start(bin, env);
      processes.push(worker);
      pool.push(worker);
    };
    await startOne();
    await startOne();
    // Start-up says which mode it runs in.
    expect(pool[0]!.output).toContain('"msg":"Redis: Redis Cluster, 3 masters"');

    // The master serving the installation's link state: its loss hurts the most.
    const slot = Number(
      await running.ctx.redis.call('CLUSTER', 'KEYSLOT', running.ctx.keys.inst(running.installationId)),
    );
    const shard = (await cluster.topology()).find((s) => s.slots.some(([a, b]) => slot >= a && slot <= b))!;
    const replica = shard.replicas[0]!;
    const kills: { recordsDone: number; pids: number[]; master: number; takeoverMs: number }[] = [];
    await backfillWhile(running, versions, async (done) => {
      // Once the first batch's CRM write is on its way (counted when it arrives, answered 150 ms later), while
      // the others are in flight. Not on the run's totals: they move only when batches end, and the backfill is
      // fast enough now that all six ended between two looks.
      const writing = running.hubspot.stats().calls['companies.batchUpdate'] ?? 0;
      if (kills.length > 0 || writing === 0) return;
      const victims = pool.splice(0);
      const started = Date.now();
      await Promise.all([...victims.map((v) => v.kill()), cluster.kill(shard.master)]);
      await waitFor(
        `port ${replica} to take over from ${shard.master}`,
        async () => ((await cluster.topology()).some((s) => s.master === replica) ? true : undefined),
        30_000,
        100,
      );
      await cluster.waitHealthy();
      kills.push({
        recordsDone: done,
        pids: victims.map((v) => v.pid),
        master: shard.master,
        takeoverMs: Date.now() - started,
      });
      await startOne();
      await startOne();
    });
    const context = `kills ${JSON.stringify(kills)}`;
    expect(kills, context).toHaveLength(1);
    expect(kills[0]!.pids, context).toHaveLength(2);
    expect(kills[0]!.recordsDone, context).toBeLessThan(COMPANIES);
    await expectRightEndState(running, versions, context);
    measured('cluster-machine-dies', { kills, versions: versions.versionCount });
  }, 300_000);
});
