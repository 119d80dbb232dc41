import type { Redis } from 'ioredis';
import { isCluster, type RedisClient, waitForRedis } from './redis.js';

/**
 * What `doctor` and start-up say about Redis: which mode (one Redis, or a cluster and how many masters), and on
 * every master the version, the cluster state and the eviction policy. Each master is asked on its own
 * connection: CONFIG and INFO answer for the node they reach, and one bad master is enough to lose jobs.
 */

export interface RedisNodeHealth {
  /** `host:port` as the client reaches it. */
  address: string;
  version: string;
  /** `cluster_state` from CLUSTER INFO (`ok` or `fail`); null on one Redis. */
  clusterState: string | null;
  /** null when CONFIG is not allowed (managed services often forbid it). */
  maxmemoryPolicy: string | null;
}

export interface RedisHealth {
  mode: 'single' | 'cluster';
  /** The one Redis, or every master of the cluster. */
  nodes: RedisNodeHealth[];
}

export async function inspectRedis(client: RedisClient): Promise<RedisHealth> {
  if (!isCluster(client)) return { mode: 'single', nodes: [await inspectNode(client, false)] };
  await waitForRedis(client, 10_000);
  const masters = client.nodes('master');
  return { mode: 'cluster', nodes: await Promise.all(masters.map((m) => inspectNode(m, true))) };
}

async function inspectNode(node: Redis, cluster: boolean): Promise<RedisNodeHealth> {
  const info = await node.info('server');
  const version = /redis_version:([\d.]+)/.exec(info)?.[1] ?? 'unknown';
  let clusterState: string | null = null;
  if (cluster) {
    const clusterInfo = String(await node.call('CLUSTER', 'INFO'));
    clusterState = /cluster_state:(\w+)/.exec(clusterInfo)?.[1] ?? 'unknown';
  }
  let maxmemoryPolicy: string | null = null;
  try {
    maxmemoryPolicy = ((await node.call('CONFIG', 'GET', 'maxmemory-policy')) as string[])[1] ?? 'unknown';
  } catch {
    maxmemoryPolicy = null;
  }
  return { address: `${node.options.host}:${node.options.port}`, version, clusterState, maxmemoryPolicy };
}

/** "one Redis" or "Redis Cluster, 3 masters": the mode as start-up logs it and `doctor` prints it. */
export function describeRedisMode(health: RedisHealth): string {
  if (health.mode === 'single') return 'one Redis';
  const n = health.nodes.length;
  return `Redis Cluster, ${n} master${n === 1 ? '' : 's'}`;
}

/** Redis 6.2 or newer: what BullMQ needs. */
export function versionSupported(version: string): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > 6 || (major === 6 && minor >= 2);
}
