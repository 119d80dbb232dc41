import type { RedisClient } from '../redis.js';
import type { Keys } from './keys.js';
import { RedisScript } from './redis-script.js';

/**
 * The auto-links each sync run made, so that a run that linked wrongly can be undone in one step. Kept for
 * as long as a run is worth undoing; the CRM record (its slug and `report_link_source`) decides at undo time
 * whether a link is still the run's.
 */
const KEEP_SECONDS = 30 * 24 * 3600;

/**
 * KEYS: installation hash, the run's links. ARGV: seconds to keep, then record id / slug pairs. Written only
 * while the installation exists (same hash tag): a batch still in flight when its installation is removed
 * leaves no links behind after the removal deleted its keys (InstallationStore.retire).
 */
const ADD_IF_INSTALLED = new RedisScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
for i = 2, #ARGV, 2 do
  redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
end
redis.call('EXPIRE', KEYS[2], ARGV[1])
return 1`);

export class RunLinks {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  /** Keeps nothing once the installation is removed (see ADD_IF_INSTALLED). */
  async add(installationId: string, runId: string, links: Map<string, string>): Promise<void> {
    if (links.size === 0) return;
    await ADD_IF_INSTALLED.run(
      this.redis,
      [this.keys.installation(installationId), this.keys.runLinks(installationId, runId)],
      [KEEP_SECONDS, ...[...links].flat()],
    );
  }

  /** record id -> slug */
  async linksOf(installationId: string, runId: string): Promise<Map<string, string>> {
    return new Map(Object.entries(await this.redis.hgetall(this.keys.runLinks(installationId, runId))));
  }
}
