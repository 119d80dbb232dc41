import type { Installation } from '../installations/store.js';
import { providers } from '../providers.js';
import { clusterNodesOf, waitForRedis } from '../redis.js';
import { describeRedisMode, inspectRedis } from '../redis-health.js';
import type { AppContext } from './context.js';
import { InstallationService } from './installation-service.js';

/** Start-up checks and the installations that come from the environment rather than OAuth. */

export class RedisUnavailableError extends Error {
  readonly code = 'REDIS_UNAVAILABLE';
  constructor(url: string, clusterNodes?: string) {
    super(
      clusterNodes
        ? `Redis Cluster does not answer at ${clusterNodes}, or its state is not ok: start it or set REDIS_CLUSTER_NODES`
        : `Redis does not answer at ${redactUrl(url)}: start Redis or set REDIS_URL`,
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

export async function checkRedis(ctx: AppContext, timeoutMs = 5_000): Promise<void> {
  const cluster = clusterNodesOf(ctx.config);
  try {
    await waitForRedis(ctx.redis, timeoutMs);
  } catch {
    throw new RedisUnavailableError(
      ctx.config.redisUrl,
      cluster?.map((n) => `${n.host}:${n.port}`).join(','),
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

/** Token-mode installations (HUBSPOT_ACCESS_TOKEN, SALESFORCE_ACCESS_TOKEN): created and backfilled once. */
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
