import { z } from 'zod';
import type { RedisClient } from '../redis.js';
import type { Keys } from '../storage/keys.js';
import { LuaScript } from '../storage/lua-script.js';
import { parseStoredJson } from '../util/json.js';

/**
 * The latest `alert.fired` per report: the only module that reads or writes it. The record fields
 * `report_alert` / `report_alert_at` are computed from here whenever a linked record is written, so an alert
 * travels the same coalesced path as a score, and a record linked later still shows its report's alert.
 */

export const storedAlertSchema = z.object({ line: z.string(), at: z.string(), eventId: z.string() });
export type StoredAlert = z.infer<typeof storedAlertSchema>;

/**
 * What the activity job of one installation did for one alert: every record's activity made (`created`), some
 * not made with the CRM's reason (`failed`; the job retries and a later success replaces it), or none to make
 * (`skipped`, with why). The event log shows it beside the event's "queued".
 */
export const activityOutcomeSchema = z.object({
  state: z.enum(['created', 'failed', 'skipped']),
  /** The installation's CRM kind as stored (the registry is not imported here). */
  crm: z.string(),
  created: z.number().int().nonnegative(),
  /** Records that had it from an earlier attempt. */
  already: z.number().int().nonnegative(),
  reason: z.string().optional(),
  at: z.string(),
});
export type ActivityOutcome = z.infer<typeof activityOutcomeSchema>;

/** Activities already made for one event stay known this long (the redelivery window and more). */
const ACTIVITY_MEMORY_SECONDS = 7 * 24 * 3600;

/** An older alert arriving late (redelivery, out of order) does not replace a newer one. */
const RECORD_IF_NEWER = LuaScript.load('alert-record');
const recordIfNewerReply = z.enum(['kept', 'older']);

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
      recordIfNewerReply,
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

  /** Keeps what the activity job did for (event, installation), replacing an earlier attempt's. */
  async recordOutcome(eventId: string, installationId: string, outcome: ActivityOutcome): Promise<void> {
    const key = this.keys.alertOutcomes(eventId);
    await this.redis
      .multi()
      .hset(key, installationId, JSON.stringify(outcome))
      .expire(key, ACTIVITY_MEMORY_SECONDS)
      .exec();
  }

  /** Per event id, the outcome of each installation's activity job (absent: none ran yet). */
  async outcomes(eventIds: readonly string[]): Promise<Map<string, Map<string, ActivityOutcome>>> {
    const unique = [...new Set(eventIds)];
    // One key per event, each in its own slot: read one by one (ioredis pipelines them on one connection).
    const raw = await Promise.all(unique.map((id) => this.redis.hgetall(this.keys.alertOutcomes(id))));
    const out = new Map<string, Map<string, ActivityOutcome>>();
    unique.forEach((eventId, i) => {
      const byInstallation = new Map<string, ActivityOutcome>();
      for (const [installationId, json] of Object.entries(raw[i] ?? {})) {
        // Unreadable: shown as no outcome yet.
        const parsed = parseStoredJson(activityOutcomeSchema, json);
        if (parsed) byInstallation.set(installationId, parsed);
      }
      if (byInstallation.size > 0) out.set(eventId, byInstallation);
    });
    return out;
  }
}
