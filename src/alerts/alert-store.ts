import { z } from 'zod';
import type { RedisClient } from '../redis.js';
import type { Keys } from '../storage/keys.js';
import { LuaScript } from '../storage/lua-script.js';

/**
 * The latest `alert.fired` per report: the only module that reads or writes it. The record fields
 * `report_alert` / `report_alert_at` are computed from here whenever a linked record is written, so an alert
 * travels the same coalesced path as a score, and a record linked later still shows its report's alert.
 */

export const storedAlertSchema = z.object({ line: z.string(), at: z.string(), eventId: z.string() });
export type StoredAlert = z.infer<typeof storedAlertSchema>;

/** Activities already made for one event stay known this long (the redelivery window and more). */
const ACTIVITY_MEMORY_SECONDS = 7 * 24 * 3600;

/** An older alert arriving late (redelivery, out of order) does not replace a newer one. */
const RECORD_IF_NEWER = LuaScript.load('alert-record');

export class AlertStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  /** Keeps the alert unless a newer one is stored; true when it became the latest. */
  async record(slug: string, alert: StoredAlert): Promise<boolean> {
    const at = new Date(alert.at).toISOString();
    const stored = await RECORD_IF_NEWER.run(
      this.redis,
      [this.keys.slugAlerts()],
      [slug, JSON.stringify({ ...alert, at }), at],
      z.enum(['kept', 'older']),
    );
    return stored === 'kept';
  }

  /** The latest alert of each slug (absent when none fired, or when what is stored cannot be read). */
  async latest(slugs: readonly string[]): Promise<Map<string, StoredAlert>> {
    const out = new Map<string, StoredAlert>();
    const unique = [...new Set(slugs)];
    if (unique.length === 0) return out;
    const raw = await this.redis.hmget(this.keys.slugAlerts(), ...unique);
    unique.forEach((slug, i) => {
      const value = raw[i];
      if (!value) return;
      try {
        const parsed = storedAlertSchema.safeParse(JSON.parse(value));
        if (parsed.success) out.set(slug, parsed.data);
      } catch {
        // Unreadable: treated as no alert, and the next alert for the slug replaces it.
      }
    });
    return out;
  }

  /** Marks the activity for (event, record) as made; false when it was made already. */
  async claimActivity(installationId: string, eventId: string, recordId: string): Promise<boolean> {
    const key = this.keys.alertActivities(installationId, eventId);
    const [[, added]] = (await this.redis
      .multi()
      .sadd(key, recordId)
      .expire(key, ACTIVITY_MEMORY_SECONDS)
      .exec()) as [[Error | null, number], [Error | null, number]];
    return added === 1;
  }

  /** Gives a claim back when the activity could not be made, so a retry makes it. */
  async releaseActivity(installationId: string, eventId: string, recordId: string): Promise<void> {
    await this.redis.srem(this.keys.alertActivities(installationId, eventId), recordId);
  }
}
