import type { Installation } from '../installations/store.js';
import { providers } from '../providers.js';
import { waitForRedis } from '../redis.js';
import type { AppContext } from './context.js';
import { InstallationService } from './installation-service.js';

/** Start-up checks and the installations that come from the environment rather than OAuth. */

export class RedisUnavailableError extends Error {
  readonly code = 'REDIS_UNAVAILABLE';
  constructor(url: string) {
    super(`Redis does not answer at ${redactUrl(url)}: start Redis or set REDIS_URL`);
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
  try {
    await waitForRedis(ctx.redis, timeoutMs);
  } catch {
    throw new RedisUnavailableError(ctx.config.redisUrl);
  }
  try {
    const policy = (await ctx.redis.call('CONFIG', 'GET', 'maxmemory-policy')) as string[];
    if (policy[1] && policy[1] !== 'noeviction') {
      ctx.logger.warn(
        { maxmemoryPolicy: policy[1] },
        `Redis maxmemory-policy is ${policy[1]}: queued jobs and state may be evicted; set it to noeviction`,
      );
    }
  } catch {
    // Managed Redis services often forbid CONFIG; the doctor command says so.
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
