import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSystem } from '../local/system.js';
import { scanTargets } from '../src/redis.js';
import { runCliOn } from './support/cli-run.js';
import { backfillWhile, expectRightEndState, slowDown } from './support/cluster-backfill.js';
import { startTestSystem, stopTestSystem } from './support/local-system.js';
import { measured } from './support/measured.js';
import { LocalRedisCluster } from './support/redis-cluster.js';
import { postSignedEvent } from './support/report-webhooks.js';
import type { ScoreVersions } from './support/score-versions.js';
import { keysWithPrefix } from './support/system-state.js';
import { waitFor } from './support/wait.js';

/**
 * The product on a Redis Cluster of three masters with one replica each (REDIS_CLUSTER_NODES): a backfill of
 * 1,000 companies while reports are re-scored and every master fails over to its replica in turn (CLUSTER
 * FAILOVER: the replica catches up, then takes the slots over), then a burst of score changes. Each ends as on
 * one Redis, and the state spreads over the masters.
 */

let cluster: LocalRedisCluster;
let system: LocalSystem;
let versions: ScoreVersions;

beforeAll(async () => {
  cluster = await LocalRedisCluster.start({ masters: 3, replicasPerMaster: 1 });
  system = await startTestSystem({
    companies: 1000,
    workers: 0,
    env: { REDIS_CLUSTER_NODES: cluster.nodesEnv },
  });
  versions = slowDown(system);
}, 120_000);

afterAll(async () => {
  await stopTestSystem(system);
  await cluster?.stop();
});

function matchedRecords() {
  return system.recordIds.map((id) => system.crm.record(id)!).filter((r) => r.status === 'matched' && r.slug);
}

describe('on a three-master Redis Cluster', () => {
  it('a backfill of 1,000 companies while every master fails over: every record right, nothing stale', async () => {
    // Started only now, after the slow-down, and two batches at a time: the ten batches take five rounds, long
    // enough for three failovers (a run's totals move only when batches end, so time is the trigger).
    await system.ctx.startWorkers({ backfill: 2 });
    const before = await cluster.topology();
    expect(before).toHaveLength(3);
    const failovers: { recordsDone: number; from: number; to: number; ms: number }[] = [];
    let since = 0;
    await backfillWhile(system, versions, async (done, state) => {
      if (!state || failovers.length === before.length) return;
      since ||= Date.now();
      // One failover every 600 ms once the run is under way (batches run while the listing goes on).
      if (Date.now() - since < 300 + failovers.length * 600) return;
      const shard = before[failovers.length]!;
      const replica = shard.replicas[0]!;
      const started = Date.now();
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
  }, 400_000);

  it('keeps its state on every master, each installation in one slot', async () => {
    const masters = await scanTargets(system.ctx.redis);
    expect(masters).toHaveLength(3);
    const prefix = system.ctx.config.redisPrefix;
    const perMaster = await Promise.all(
      masters.map(async (m) => {
        const keys: string[] = [];
        let cursor = '0';
        do {
          const [next, page] = await m.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
          cursor = next;
          keys.push(...page);
        } while (cursor !== '0');
        return keys;
      }),
    );
    // The three queues, the run, the inbox and the installation do not all sit on one master.
    expect(perMaster.filter((keys) => keys.length > 0).length).toBeGreaterThanOrEqual(2);
    const all = await keysWithPrefix(system.ctx.redis, prefix);
    const instKeys = all.filter((k) => k.startsWith(`${system.ctx.keys.inst(system.installationId)}:`));
    expect(instKeys.length).toBeGreaterThan(5);
    const slots = new Set(
      await Promise.all(instKeys.map((k) => system.ctx.redis.call('CLUSTER', 'KEYSLOT', k))),
    );
    expect(slots.size).toBe(1);
  });

  it('a burst of 1,000 score changes on 50 reports is accepted and reaches the records', async () => {
    system.hubspot.injectFaults({ latencyMs: 0 });
    system.sandbox.setFaults({ delayMs: 0 });
    const slugs = [...new Set(matchedRecords().map((r) => r.slug!))].slice(0, 50);
    expect(slugs.length).toBe(50);
    const next = new Map(slugs.map((s, i) => [s, 60 + i / 4]));
    for (const [slug, score] of next) system.sandbox.updateReport(slug, { score: { overall: score } });
    const secret = system.ctx.config.reports.webhookSecrets[0]!;
    const statuses: number[] = [];
    for (let i = 0; i < 1000; i += 50) {
      const batch = await Promise.all(
        Array.from({ length: 50 }, (_, j) => {
          const id = `msg_${randomUUID()}`;
          const body = JSON.stringify({
            id,
            type: 'score.changed',
            created_at: new Date().toISOString(),
            data: { slug: slugs[(i + j) % 50] },
          });
          return postSignedEvent(`${system.appUrl}/webhooks/reports`, secret, body, { id });
        }),
      );
      statuses.push(...batch.map((r) => r.status));
    }
    expect(statuses.filter((s) => s !== 202)).toEqual([]);
    await waitFor(
      'every linked record of the 50 reports to carry its new score',
      () =>
        matchedRecords()
          .filter((r) => next.has(r.slug!))
          .every((r) => system.crm.record(r.id)?.score === next.get(r.slug!))
          ? true
          : undefined,
      60_000,
      200,
    );
  });

  it('doctor says it is a cluster of three masters and checks each one', async () => {
    const doctor = async () => {
      const { code, stdout } = await runCliOn(system, ['doctor', '--json']);
      const report = JSON.parse(stdout) as {
        checks: { name: string; ok: boolean; detail: string; fix?: string }[];
      };
      return { code, checks: report.checks.filter((c) => c.name.startsWith('Redis')) };
    };
    const healthy = await doctor();
    expect(healthy.checks.find((c) => c.name === 'Redis mode')?.detail).toMatch(
      /^Redis Cluster, 3 masters: /,
    );
    const masters = (await cluster.topology()).map((s) => `127.0.0.1:${s.master}`).sort();
    for (const what of ['Redis Cluster state', 'Redis eviction policy', 'Redis version']) {
      const rows = healthy.checks.filter((c) => c.name.startsWith(`${what} (`));
      expect(rows.map((c) => /\((.+)\)$/.exec(c.name)?.[1]).sort(), what).toEqual(masters);
      expect(
        rows.every((c) => c.ok),
        what,
      ).toBe(true);
    }

    // One master with an evicting policy fails its own line, and doctor's exit status.
    const port = Number(masters[1]!.split(':')[1]);
    await cluster.command(port, ['CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lru']);
    try {
      const evicting = await doctor();
      const bad = evicting.checks.filter((c) => !c.ok);
      expect(bad.map((c) => c.name)).toEqual([`Redis eviction policy (127.0.0.1:${port})`]);
      expect(bad[0]?.detail).toBe('allkeys-lru');
      expect(evicting.code).toBe(1);
    } finally {
      await cluster.command(port, ['CONFIG', 'SET', 'maxmemory-policy', 'noeviction']);
    }
  });
});
