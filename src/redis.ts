import { type ChainableCommander, Cluster, type ClusterOptions, Redis, type RedisOptions } from 'ioredis';
import { Keys } from './storage/keys.js';

/**
 * Redis connections. BullMQ workers need `maxRetriesPerRequest: null` (a blocked command must wait out a
 * restart, not fail) and no command timeout (they block on purpose); producers and request handlers fail fast
 * instead: `enableOfflineQueue: false` while the connection is down, and `commandTimeout` while it is up but
 * Redis does not answer (paused, hung, a network that swallows packets), so a request is never held by Redis
 * for longer than PRODUCER_COMMAND_TIMEOUT_MS per command. A timed-out command may still run on Redis later:
 * what callers write is idempotent (event ids, job ids, marks) so a retry of the request changes nothing twice.
 *
 * One Redis (`REDIS_URL`) or a Redis Cluster (`REDIS_CLUSTER_NODES`): every module takes a `RedisClient`, which
 * is either, and builds its keys in storage/keys.ts, whose hash tags keep what one script or transaction touches
 * in one slot.
 */

export type RedisRole = 'worker' | 'producer';

/** A connection to one Redis or to a Redis Cluster: the commands the connector uses are the same on both. */
export type RedisClient = Redis | Cluster;

export interface RedisNode {
  host: string;
  port: number;
}

/**
 * How a cluster's nodes are reached (REDIS_CLUSTER_USERNAME, _PASSWORD, _TLS, _TLS_CA_FILE). One Redis takes all
 * of this in its URL (`rediss://user:password@host:6379`); a cluster's nodes are discovered, so it is said once
 * for all of them.
 */
export interface RedisClusterAuth {
  username: string | null;
  password: string | null;
  tls: boolean;
  /** PEM bundle of the CA the nodes' certificates are checked against; null: the system's CAs. */
  tlsCa: string | null;
}

/** Where Redis is: the configuration's settings (config.ts), or a bare URL (tests, benches). */
export type RedisTarget =
  | string
  | {
      readonly redisUrl: string;
      readonly redisClusterNodes: readonly RedisNode[] | null;
      readonly redisClusterAuth?: RedisClusterAuth;
    };

/**
 * How long a producer connection waits for one command's answer. Longer than any command the connector sends
 * takes on a healthy Redis (scripts are bounded; scans go in pages), short enough that a request handler on a
 * hung Redis fails soon; webhook routes also have a deadline of their own (server/webhook-deadline.ts).
 */
export const PRODUCER_COMMAND_TIMEOUT_MS = 2_000;

export function redisOptions(role: RedisRole): RedisOptions {
  const common: RedisOptions = {
    // Reconnect forever with a capped delay: `serve` and `worker` must survive a Redis restart.
    retryStrategy: (attempt) => Math.min(200 * attempt, 2_000),
    lazyConnect: false,
  };
  return role === 'worker'
    ? { ...common, maxRetriesPerRequest: null, enableReadyCheck: true }
    : {
        ...common,
        maxRetriesPerRequest: 1,
        enableOfflineQueue: false,
        connectTimeout: 5_000,
        commandTimeout: PRODUCER_COMMAND_TIMEOUT_MS,
      };
}

/**
 * The same roles on a cluster. The retry and offline-queue settings live at the cluster level there (ioredis
 * ignores them per node). While a master fails over, a command to its slots is tried again every 300 ms, at most
 * `maxRedirections` times: a worker waits out ~30 s (a replica takes over after `cluster-node-timeout`, 15 s by
 * default, plus its election) rather than fail its job; a producer gives up after ~5 s, so a webhook answers 503
 * and is sent again.
 */
export function clusterOptions(role: RedisRole, name?: string, auth?: RedisClusterAuth): ClusterOptions {
  const node: ClusterOptions['redisOptions'] = {
    ...(name ? { connectionName: name } : {}),
    ...(auth?.username ? { username: auth.username } : {}),
    ...(auth?.password ? { password: auth.password } : {}),
    ...(auth?.tls ? { tls: auth.tlsCa ? { ca: auth.tlsCa } : {} } : {}),
    ...(role === 'worker'
      ? { maxRetriesPerRequest: null }
      : { maxRetriesPerRequest: 1, connectTimeout: 5_000, commandTimeout: PRODUCER_COMMAND_TIMEOUT_MS }),
  };
  return {
    clusterRetryStrategy: (attempt) => Math.min(200 * attempt, 2_000),
    lazyConnect: false,
    enableReadyCheck: true,
    retryDelayOnFailover: 300,
    retryDelayOnClusterDown: 300,
    retryDelayOnTryAgain: 300,
    retryDelayOnMoved: 50,
    maxRedirections: role === 'worker' ? 100 : 16,
    ...(role === 'worker' ? { enableOfflineQueue: true } : { enableOfflineQueue: false }),
    // With TLS the certificate names the host as configured: ioredis must not swap the name for its address.
    ...(auth?.tls
      ? { dnsLookup: (address: string, done: (err: null, a: string) => void) => done(null, address) }
      : {}),
    redisOptions: node,
  };
}

export function isCluster(client: RedisClient): client is Cluster {
  return client instanceof Cluster;
}

/** `host:port,host:port` as REDIS_CLUSTER_NODES names them; null when not a cluster. */
export function clusterNodesOf(target: RedisTarget): readonly RedisNode[] | null {
  if (typeof target === 'string') return null;
  return target.redisClusterNodes && target.redisClusterNodes.length > 0 ? target.redisClusterNodes : null;
}

/**
 * `autoPipelining`: commands issued in one turn of the event loop leave in one write. For a connection that
 * carries many small independent commands at once (the score-change acknowledgements of a storm), where a
 * socket write per command costs more than the command.
 */
export interface ConnectionOptions {
  autoPipelining?: boolean;
}

export function createRedis(
  target: string,
  role: RedisRole,
  name?: string,
  options?: ConnectionOptions,
): Redis;
export function createRedis(
  target: RedisTarget,
  role: RedisRole,
  name?: string,
  options?: ConnectionOptions,
): RedisClient;
export function createRedis(
  target: RedisTarget,
  role: RedisRole,
  name?: string,
  options: ConnectionOptions = {},
): RedisClient {
  const nodes = clusterNodesOf(target);
  const pipelining = options.autoPipelining ? { enableAutoPipelining: true } : {};
  const client: RedisClient = nodes
    ? new Cluster(
        nodes.map((n) => ({ host: n.host, port: n.port })),
        {
          ...clusterOptions(role, name, typeof target === 'string' ? undefined : target.redisClusterAuth),
          ...pipelining,
        },
      )
    : new Redis(typeof target === 'string' ? target : target.redisUrl, {
        ...redisOptions(role),
        ...(name ? { connectionName: name } : {}),
        ...pipelining,
      });
  // An 'error' listener keeps ioredis from printing every reconnect attempt as an unhandled error; the
  // caller's readiness check and job failures report the outage instead.
  client.on('error', () => {});
  return client;
}

/** Waits until the client is ready, or throws after `timeoutMs`. */
export async function waitForRedis(client: RedisClient, timeoutMs = 5_000): Promise<void> {
  if (client.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    // The connection's last error says why it is not ready (refused, WRONGPASS, a certificate not trusted).
    let lastError: string | null = null;
    // A cluster's own error is often only "Connection is closed."; the node's says why (a certificate refused).
    let lastNodeError: string | null = null;
    const timer = setTimeout(() => {
      cleanup();
      const why = [lastError, lastNodeError && lastNodeError !== lastError ? lastNodeError : null]
        .filter((m) => m !== null)
        .join('; ');
      reject(new Error(`Redis did not answer within ${timeoutMs} ms${why ? `: ${why}` : ''}`));
    }, timeoutMs);
    const onReady = () => {
      cleanup();
      resolve();
    };
    const onError = (err: Error & { lastNodeError?: Error }) => {
      lastError = (err.lastNodeError ?? err).message;
    };
    const onNodeError = (err: Error, address: string) => {
      lastNodeError = `node ${address}: ${err.message}`;
    };
    const cleanup = () => {
      clearTimeout(timer);
      client.off('ready', onReady);
      client.off('error', onError);
      client.off('node error', onNodeError);
    };
    client.on('ready', onReady);
    client.on('error', onError);
    client.on('node error', onNodeError);
  });
}

export async function closeRedis(...clients: RedisClient[]): Promise<void> {
  await Promise.all(
    clients.map(async (c) => {
      try {
        await c.quit();
      } catch {
        c.disconnect();
      }
    }),
  );
}

/**
 * The connections to scan for keys: the client itself on one Redis, every master on a cluster (each master
 * answers SCAN only for its own slots).
 */
export async function scanTargets(client: RedisClient): Promise<Redis[]> {
  if (!isCluster(client)) return [client];
  await waitForRedis(client, 10_000);
  return client.nodes('master');
}

/** Sends a pipeline or a transaction and throws its first command's error (ioredis answers them, not throws). */
export async function execOrThrow(batch: ChainableCommander): Promise<void> {
  for (const [err] of (await batch.exec()) ?? []) if (err) throw err;
}

/**
 * Deletes every key matching `pattern` (SCAN + UNLINK, so a large keyspace never blocks Redis). On a cluster
 * each master is scanned, and each key is unlinked by itself (in one pipeline per page): keys of one page may
 * lie in different slots, which one multi-key UNLINK refuses.
 */
export async function deleteByPattern(client: RedisClient, pattern: string): Promise<number> {
  let deleted = 0;
  const cluster = isCluster(client);
  for (const node of await scanTargets(client)) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length === 0) continue;
      if (!cluster) {
        deleted += await node.unlink(...keys);
        continue;
      }
      const pipeline = node.pipeline();
      for (const key of keys) pipeline.unlink(key);
      for (const [err, n] of (await pipeline.exec()) ?? []) {
        if (err) throw err;
        deleted += Number(n);
      }
    } while (cursor !== '0');
  }
  return deleted;
}

/** Opens a short-lived connection and deletes every key under `${prefix}:`; returns how many were deleted. */
export async function deleteKeysWithPrefix(target: RedisTarget, prefix: string): Promise<number> {
  const client = createRedis(target, 'worker', `${prefix}-cleanup`);
  try {
    return await deleteByPattern(client, new Keys(prefix).everything());
  } finally {
    await closeRedis(client);
  }
}
