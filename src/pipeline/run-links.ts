import type { RedisClient } from '../redis.js';
import type { Keys } from './keys.js';

/**
 * The auto-links each sync run made, so that a run that linked wrongly can be undone in one step. Kept for
 * as long as a run is worth undoing; the CRM record (its slug and `report_link_source`) decides at undo time
 * whether a link is still the run's.
 */
const KEEP_SECONDS = 30 * 24 * 3600;

export class RunLinks {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  async add(installationId: string, runId: string, links: Map<string, string>): Promise<void> {
    if (links.size === 0) return;
    const key = this.keys.runLinks(installationId, runId);
    await this.redis.multi().hset(key, Object.fromEntries(links)).expire(key, KEEP_SECONDS).exec();
  }

  /** record id -> slug */
  async linksOf(installationId: string, runId: string): Promise<Map<string, string>> {
    return new Map(Object.entries(await this.redis.hgetall(this.keys.runLinks(installationId, runId))));
  }
}
