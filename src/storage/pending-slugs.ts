import { z } from 'zod';
import type { RedisClient } from '../redis.js';
import type { Keys } from './keys.js';
import { LuaScript } from './lua-script.js';

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

/** Marks only while the installation exists (pending-mark.lua). */
const MARK = LuaScript.load('pending-mark');
const DONE = LuaScript.load('pending-done');

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
      z.union([z.number(), z.literal('gone')]),
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
      z.number(),
    );
  }

  async count(installationId: string, lane: SlugLane): Promise<number> {
    return this.redis.zcard(this.keys.pendingSlugs(installationId, lane));
  }
}
