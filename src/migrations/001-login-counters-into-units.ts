import { type RedisClient, scanTargets } from '../redis.js';
import { countingUnit } from '../server/counting-unit.js';
import { Keys } from '../storage/keys.js';
import { LOGIN_FAILURES_PER_WINDOW } from './login-throttle.js';

/**
 * A failure counter named by a single IPv6 address (or an IPv4 address written as IPv6) is not named by its
 * countingUnit, so the throttle would not see it. At start-up each is folded into its unit's counter (the counts
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
