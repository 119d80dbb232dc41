import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReportReader } from '../src/pipeline/report-reader.js';
import { closeRedis, createRedis, type RedisClient, scanTargets } from '../src/redis.js';
import { ReportClient } from '../src/reports/client.js';
import { createSandbox, type ListeningSandbox, type ReportSandbox } from '../src/sandbox/index.js';
import { Keys } from '../src/storage/keys.js';
import { markSlugChanged } from '../src/storage/slug-changes.js';
import { LocalRedisCluster } from './support/redis-cluster.js';

/**
 * The report cache on a Redis Cluster of three masters (issue 30): one key's reads and searches spread over the
 * masters (at least 16 hash tags, never one slot), each read with its fill lock in one slot, and reused as on one
 * Redis.
 */

let cluster: LocalRedisCluster;
let redis: RedisClient;
let sandbox: ReportSandbox;
let listening: ListeningSandbox;
const keys = new Keys('rc');

beforeAll(async () => {
  cluster = await LocalRedisCluster.start({ masters: 3 });
  redis = createRedis(
    { redisUrl: '', redisClusterNodes: cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })) },
    'worker',
  );
  sandbox = createSandbox();
  listening = await sandbox.listen(0);
}, 120_000);

afterAll(async () => {
  await listening?.close();
  if (redis) await closeRedis(redis);
  await cluster?.stop();
});

describe('the report cache on a three-master cluster', () => {
  it("spreads one key's reads over every master and reuses them", async () => {
    const client = new ReportClient({ baseUrl: listening.url, apiKey: 'sk_sandbox_read' });
    const reader = new ReportReader(redis, keys, client);
    const slugs = sandbox.listReports().map((r) => r.slug);
    for (const slug of slugs) await reader.read(slug);
    const hits = await reader.search('Acme Robotics', 10);
    // A report the search did not find: its change leaves the search current.
    const changed = slugs.find((s) => !hits.some((h) => h.slug === s))!;
    await markSlugChanged(redis, keys, changed);
    sandbox.resetRequestCounts();
    for (const slug of slugs) await reader.read(slug);
    await reader.search('Acme Robotics', 10);
    // Only the changed one is read again.
    expect(sandbox.requestCount()).toBe(1);

    const perMaster: number[] = [];
    const tags = new Set<string>();
    for (const node of await scanTargets(redis)) {
      const found = await node.keys('rc:rcache:*');
      perMaster.push(found.length);
      for (const k of found) tags.add(/\{([^}]*)\}/.exec(k)![1]!);
    }
    expect(perMaster).toHaveLength(3);
    expect(perMaster.every((n) => n > 0)).toBe(true);
    expect(perMaster.reduce((a, b) => a + b, 0)).toBe(slugs.length + 1);
    expect(tags.size).toBeGreaterThanOrEqual(16);
  });
});
