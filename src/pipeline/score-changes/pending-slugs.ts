import { z } from 'zod';
import type { RedisClient } from '../../redis.js';
import type { Keys } from '../../storage/keys.js';
import { LuaScript } from '../../storage/lua-script.js';

/**
 * Reports whose linked records wait for an update, per installation and lane: what a `slug-update` job works
 * through. Each mark carries a number from the installation's counter, so the update of many slugs together
 * (records gathered across them, written in full CRM batches) removes only the marks it took: a slug marked
 * again while its update ran keeps its new mark and is updated once more. The marks live in Redis, so a killed
 * worker loses none: the job runs again and finds them.
 *
 * `urgent`: single changes, coalesced over a moment. `hot`: a storm's repeats, coalesced longer (a few seconds)
 * so a storm costs a few reads per report; both run on the realtime workers, never behind a backfill. Beside
 * the marks, when each slug's oldest unfinished change arrived: the age of the oldest pending update and the
 * event-to-CRM latency (metrics.ts).
 */

export type SlugLane = 'urgent' | 'hot';

export interface PendingSlug {
  slug: string;
  mark: number;
}

/** Marks only while the installation exists (pending-mark.lua). */
const MARK = LuaScript.load('pending-mark');
const markReply = z.union([z.number(), z.literal('gone')]);
const DONE = LuaScript.load('pending-done');
const doneReply = z.number();

const takenSchema = z.array(z.string());

export class PendingSlugs {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  /**
   * Marks nothing once the installation is removed (see MARK). `since`: when the change arrived (a webhook's
   * acceptance, a CRM change's arrival); now when not known. A mark in the hot lane takes the slug out of the
   * urgent one.
   */
  async mark(installationId: string, slug: string, lane: SlugLane, since = Date.now()): Promise<void> {
    await MARK.run(
      this.redis,
      [
        this.keys.installation(installationId),
        this.keys.pendingSlugs(installationId, lane),
        this.keys.pendingSlugSeq(installationId),
        this.keys.pendingSlugSince(installationId),
        // A slug gone hot leaves the single changes' lane: its update waits with the storm's.
        ...(lane === 'hot' ? [this.keys.pendingSlugs(installationId, 'urgent')] : []),
      ],
      [slug, Math.floor(since)],
      markReply,
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
      [
        this.keys.pendingSlugs(installationId, lane),
        this.keys.pendingSlugSince(installationId),
        this.keys.pendingSlugs(installationId, lane === 'hot' ? 'urgent' : 'hot'),
      ],
      taken.flatMap((t) => [t.slug, t.mark]),
      doneReply,
    );
  }

  /** When each slug's oldest unfinished change arrived (ms), for those that say (older releases' marks do not). */
  async since(installationId: string, slugs: readonly string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (slugs.length === 0) return out;
    const scores = await this.redis.zmscore(this.keys.pendingSlugSince(installationId), ...slugs);
    slugs.forEach((slug, i) => {
      const at = scores[i];
      if (at !== null && at !== undefined) out.set(slug, Number(at));
    });
    return out;
  }

  /** When the installation's oldest pending change arrived (ms), or null when none waits. */
  async oldest(installationId: string): Promise<number | null> {
    const [, at] = await this.redis.zrange(
      this.keys.pendingSlugSince(installationId),
      '0',
      '0',
      'WITHSCORES',
    );
    return at === undefined ? null : Number(at);
  }

  async count(installationId: string, lane: SlugLane): Promise<number> {
    return this.redis.zcard(this.keys.pendingSlugs(installationId, lane));
  }
}
