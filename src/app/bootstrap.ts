import { isIP } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { Installation } from '../installations/store.js';
import { providers } from '../providers.js';
import { clusterNodesOf, type RedisNode, waitForRedis } from '../redis.js';
import { describeRedisMode, inspectRedis } from '../redis-health.js';
import type { AppContext } from './context.js';
import { InstallationService } from './installation-service.js';

/** Start-up checks and the installations that come from the environment rather than OAuth. */

export class RedisUnavailableError extends Error {
  readonly code = 'REDIS_UNAVAILABLE';
  constructor(url: string, clusterNodes?: string, why?: string) {
    super(
      (clusterNodes
        ? `Redis Cluster does not answer at ${clusterNodes}, or its state is not ok: start it or set REDIS_CLUSTER_NODES (and REDIS_CLUSTER_PASSWORD, REDIS_CLUSTER_TLS where the nodes need them)`
        : `Redis does not answer at ${redactUrl(url)}: start Redis or set REDIS_URL`) +
        (why ? ` (${why})` : ''),
    );
    this.name = 'RedisUnavailableError';
  }
}

function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'REDIS_URL';
  }
}

/**
 * Why a TLS handshake with a cluster node fails, if it does (null when it succeeds or the node is not reached):
 * ioredis reports only "Connection is closed." when a certificate is refused, which does not say what to fix.
 */
async function tlsProblem(node: RedisNode, config: AppContext['config']): Promise<string | null> {
  return new Promise((resolve) => {
    const socket = tlsConnect({
      host: node.host,
      port: node.port,
      ...(isIP(node.host) ? {} : { servername: node.host }),
      ...(config.redisClusterAuth.tlsCa ? { ca: config.redisClusterAuth.tlsCa } : {}),
      timeout: 3_000,
    });
    const done = (problem: string | null) => {
      socket.destroy();
      resolve(problem);
    };
    socket.once('secureConnect', () => done(null));
    socket.once('timeout', () => done(null));
    socket.once('error', (err) =>
      done(
        `TLS with ${node.host}:${node.port}: ${err.message}${config.redisClusterAuth.tlsCa ? '' : " (set REDIS_CLUSTER_TLS_CA_FILE to the CA that signed the nodes' certificates)"}`,
      ),
    );
  });
}

export async function checkRedis(ctx: AppContext, timeoutMs = 5_000): Promise<void> {
  const cluster = clusterNodesOf(ctx.config);
  try {
    await waitForRedis(ctx.redis, timeoutMs);
  } catch (err) {
    const tls = cluster && ctx.config.redisClusterAuth.tls ? await tlsProblem(cluster[0]!, ctx.config) : null;
    throw new RedisUnavailableError(
      ctx.config.redisUrl,
      cluster?.map((n) => `${n.host}:${n.port}`).join(','),
      [(err as Error).message, tls].filter((m) => m !== null).join('; '),
    );
  }
  // Which mode, and each master's state and eviction policy: a warning, not a refusal (doctor fails on them).
  let health: Awaited<ReturnType<typeof inspectRedis>>;
  try {
    health = await inspectRedis(ctx.redis);
  } catch (err) {
    ctx.logger.warn({ err }, 'could not inspect Redis (mode, cluster state, eviction policy); run doctor');
    return;
  }
  ctx.logger.info(
    { redisMode: health.mode, masters: health.nodes.map((n) => n.address) },
    `Redis: ${describeRedisMode(health)}`,
  );
  for (const node of health.nodes) {
    if (node.clusterState !== null && node.clusterState !== 'ok') {
      ctx.logger.warn(
        { node: node.address, clusterState: node.clusterState },
        `Redis Cluster master ${node.address} says cluster_state:${node.clusterState}: some slots are not served`,
      );
    }
    if (node.maxmemoryPolicy !== null && node.maxmemoryPolicy !== 'noeviction') {
      ctx.logger.warn(
        { node: node.address, maxmemoryPolicy: node.maxmemoryPolicy },
        `Redis maxmemory-policy is ${node.maxmemoryPolicy} on ${node.address}: queued jobs and state may be evicted; set it to noeviction`,
      );
    }
  }
}

/** Token-mode installations (each provider's `tokenVariable`): created and backfilled once. */
export async function ensureTokenModeInstallations(ctx: AppContext): Promise<Installation[]> {
  const service = new InstallationService(ctx);
  const made: Installation[] = [];
  for (const provider of providers) {
    const installation = await provider.installFromToken(ctx.config, ctx.installations);
    if (!installation) continue;
    made.push(installation);
    const runs = await ctx.runs.recent(installation.id, 1);
    if (runs.length === 0) await service.installed(installation);
  }
  return made;
}
