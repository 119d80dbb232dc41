import type { RedisClient } from '../redis.js';
import type { Keys } from './keys.js';

/**
 * Deletes a finished run's cached reports and searches (pipeline/report-reader.ts fills them). They expire
 * within a day anyway, but a daily sweep would keep a day of them, about as much memory as the link state
 * itself; nothing reads them after the run. All of a run's keys share its hash tag (one slot on a cluster), so
 * one UNLINK takes many.
 */
export async function dropRunCaches(redis: RedisClient, keys: Keys, runId: string): Promise<void> {
  const index = keys.runCached(runId);
  const cached = await redis.smembers(index);
  for (let i = 0; i < cached.length; i += 500) await redis.unlink(...cached.slice(i, i + 500));
  await redis.unlink(index);
}
