import type { RedisClient } from '../redis.js';
import type { Keys } from './keys.js';

/**
 * Deletes a finished run's cached reports and searches as older releases kept them, per run (now one report
 * cache per key serves every run: pipeline/report-reader.ts). Nothing reads them any more; a run started before
 * the upgrade still has them, so it drops them when it finishes, and a job's `ev-<job id>` ones expire within
 * the day they were kept for. All of a run's keys share its hash tag (one slot on a cluster), so one UNLINK takes
 * many; a run started since has no index and costs one SMEMBERS.
 */
export async function dropRunCaches(redis: RedisClient, keys: Keys, runId: string): Promise<void> {
  const index = keys.runCached(runId);
  const cached = await redis.smembers(index);
  for (let i = 0; i < cached.length; i += 500) await redis.unlink(...cached.slice(i, i + 500));
  await redis.unlink(index);
}
