/**
 * Upgrades from: deployments written before 2026-11-26 12:35 UTC, which counted admin login failures per IPv6
 * address (`admin:login-failures:<address>`) instead of per countingUnit (an IPv6 /64, an IPv4 address).
 * Can go when: every deployment is at schema version 1 or more. The counters expire with their window
 * (LOGIN_WINDOW_MS, 15 minutes), so the step only matters for a lockout running while such a deployment is
 * upgraded; a deployment still on an older release loses at most that lockout if it skips this step.
 */
import { LOGIN_FAILURES_PER_WINDOW } from '../auth/login-throttle.js';
import { type RedisClient, scanTargets } from '../redis.js';
import { Keys } from '../storage/keys.js';
import { countingUnit } from '../util/counting-unit.js';
import type { MigrationStep } from './step.js';

/**
 * A failure counter named by a single IPv6 address (or an IPv4 address written as IPv6) is not named by its
 * countingUnit, so the throttle would not see it. Each is folded into its unit's counter (the counts
 * added, at most the limit, the later of the two window ends kept) and deleted, so a lockout running while a
 * deployment is upgraded holds. Idempotent: a counter named by its unit is left alone. Returns how many were
 * folded.
 */
export async function foldLoginCountersIntoUnits(redis: RedisClient, prefix: string): Promise<number> {
  const keys = new Keys(prefix);
  const stem = keys.adminLoginFailures('');
  let folded = 0;
  for (const node of await scanTargets(redis)) {
    let cursor = '0';
    do {
      const [next, found] = await node.scan(cursor, 'MATCH', `${stem}*`, 'COUNT', 1000);
      cursor = next;
      for (const key of found) {
        const client = key.slice(stem.length);
        const unit = countingUnit(client);
        if (unit === client) continue;
        const [count, ttl] = await Promise.all([redis.get(key), redis.pttl(key)]);
        const target = keys.adminLoginFailures(unit);
        if (count !== null && ttl > 0) {
          const sum = await redis.incrby(target, Number(count) || 0);
          if (sum > LOGIN_FAILURES_PER_WINDOW) await redis.set(target, LOGIN_FAILURES_PER_WINDOW, 'KEEPTTL');
          const left = await redis.pttl(target);
          await redis.pexpire(target, Math.max(ttl, left));
        }
        await redis.del(key);
        folded += 1;
      }
    } while (cursor !== '0');
  }
  return folded;
}

export const step: MigrationStep = {
  version: 1,
  name: 'login failure counters folded into their counting units',
  run: async (ctx) => ({ folded: await foldLoginCountersIntoUnits(ctx.redis, ctx.config.redisPrefix) }),
};
