import { z } from 'zod';
import type { RedisClient } from '../redis.js';
import type { Keys } from './keys.js';
import { RedisScript } from './redis-script.js';

/**
 * Reports whose linked records wait for an update, per installation and lane: what a `slug-update` job works
 * through. Each mark carries a number from the installation's counter, so the update of many slugs together
 * (records gathered across them, written in full CRM batches) removes only the marks it took: a slug marked
 * again while its update ran keeps its new mark and is updated once more. The marks live in Redis, so a killed
 * worker loses none: the job runs again and finds them.
 *
 * `urgent`: single changes (realtime workers, the report key's whole burst). `hot`: a storm's repeats
 * (deferrable: backfill workers, behind single changes).
 */

export type SlugLane = 'urgent' | 'hot';

export interface PendingSlug {
  slug: string;
  mark: number;
}

/**
 * KEYS: installation hash, the lane's marks, the mark counter. Marks only while the installation exists (same
 * hash tag): a batch still in flight when its installation is removed leaves no marks behind after the removal
 * deleted its keys (InstallationStore.retire). Returns the mark, or 0 when the installation is gone.
 */
const MARK = new RedisScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local n = redis.call('INCR', KEYS[3])
redis.call('ZADD', KEYS[2], n, ARGV[1])
return n`);

// Removes each taken slug only while it still holds the mark that was taken.
const DONE = new RedisScript(`
local removed = 0
for i = 1, #ARGV, 2 do
  local current = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if current and tonumber(current) == tonumber(ARGV[i + 1]) then
    redis.call('ZREM', KEYS[1], ARGV[i])
    removed = removed + 1
  end
end
return removed`);

const takenSchema = z.array(z.string());

export class PendingSlugs {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  /** Marks nothing once the installation is removed (see MARK). */
  async mark(installationId: string, slug: string, lane: SlugLane): Promise<void> {
    await MARK.run(
      this.redis,
      [
        this.keys.installation(installationId),
        this.keys.pendingSlugs(installationId, lane),
        this.keys.pendingSlugSeq(installationId),
      ],
      [slug],
    );
  }

  /** Up to `max` marked slugs, oldest mark first. */
  async take(installationId: string, lane: SlugLane, max: number): Promise<PendingSlug[]> {
    const flat = takenSchema.parse(
      await this.redis.zrange(
        this.keys.pendingSlugs(installationId, lane),
        '0',
        String(max - 1),
        'WITHSCORES',
      ),
    );
    const out: PendingSlug[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) out.push({ slug: flat[i]!, mark: Number(flat[i + 1]) });
    return out;
  }

  /** Clears the marks taken, except those marked again since. */
  async done(installationId: string, lane: SlugLane, taken: readonly PendingSlug[]): Promise<void> {
    if (taken.length === 0) return;
    await DONE.run(
      this.redis,
      [this.keys.pendingSlugs(installationId, lane)],
      taken.flatMap((t) => [t.slug, t.mark]),
    );
  }

  async count(installationId: string, lane: SlugLane): Promise<number> {
    return this.redis.zcard(this.keys.pendingSlugs(installationId, lane));
  }
}
