import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalRedisCluster } from './support/redis-cluster.js';

/**
 * The test cluster's append-only mode, which the operator-day bench's fault phase relies on (issue 30): every
 * master SIGKILLed at once (no replicas, so a real outage) and started again reads its own AOF back and keeps
 * its identity and slots from its nodes-<port>.conf, so the cluster is ok again with every acknowledged write.
 */

let cluster: LocalRedisCluster;

beforeAll(async () => {
  cluster = await LocalRedisCluster.start({ masters: 3, appendOnly: true });
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
});

function client(): Cluster {
  const c = new Cluster(
    cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })),
    { clusterRetryStrategy: () => 100 },
  );
  c.on('error', () => {});
  return c;
}

/** The node's run id: a new one means a new process, not the old one still answering. */
async function runId(port: number): Promise<string> {
  const info = String(await cluster.command(port, ['INFO', 'server']));
  return /run_id:(\w+)/.exec(info)![1]!;
}

describe('LocalRedisCluster with appendOnly', () => {
  it('every master SIGKILLed and restarted: the keys written before are there and the cluster is ok', async () => {
    const before = client();
    // Keys on each master's slots (hash tags spread them), so every node's AOF has something to replay.
    const keys = Array.from({ length: 30 }, (_, i) => `rc-support:{k${i}}`);
    try {
      for (const [i, key] of keys.entries()) await before.set(key, `v${i}`);
      const owners = new Set(
        await Promise.all(keys.map(async (k) => Number(await before.call('CLUSTER', 'KEYSLOT', k)))),
      );
      expect(owners.size).toBeGreaterThan(3);
    } finally {
      before.disconnect();
    }
    const masters = (await cluster.topology()).map((s) => s.master);
    expect(masters).toHaveLength(3);
    for (const port of masters) expect(existsSync(join(cluster.dir, `appendonlydir-${port}`))).toBe(true);
    const ids = await Promise.all(masters.map(runId));
    const slotsBefore = (await cluster.topology()).map((s) => JSON.stringify(s.slots)).sort();

    await Promise.all(masters.map((port) => cluster.kill(port)));
    expect(cluster.stopped.sort()).toEqual([...masters].sort());
    await cluster.restart(...masters);

    expect(cluster.stopped).toEqual([]);
    const after = client();
    try {
      const values = await Promise.all(keys.map((k) => after.get(k)));
      expect(values).toEqual(keys.map((_, i) => `v${i}`));
    } finally {
      after.disconnect();
    }
    for (const [i, port] of masters.entries()) expect(await runId(port)).not.toBe(ids[i]);
    expect((await cluster.topology()).map((s) => JSON.stringify(s.slots)).sort()).toEqual(slotsBefore);
    for (const port of masters)
      expect(String(await cluster.command(port, ['CLUSTER', 'INFO']))).toContain('cluster_state:ok');
  }, 90_000);
});
