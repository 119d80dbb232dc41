import type { ApiUsage, UsageListener } from '../crm/connector.js';
import type { RedisClient } from '../redis.js';
import type { Keys } from '../storage/keys.js';

/**
 * The CRM's API usage as the connector last saw it, kept in Redis per installation. A connector reads usage
 * from the CRM's answers (its rate-limit headers, its limits resource) and tells its `onUsage`, and a
 * connector lives in one process for half a minute: the admin page, served by another process or a minute
 * after the sync ended, would otherwise find no reading at all.
 */

/** A stored reading: the usage and when it was seen. */
export interface CrmUsageReading extends ApiUsage {
  at: string;
}

/** At most one write per connector this often: a backfill makes many calls a second. */
const WRITE_EVERY_MS = 5_000;
/** A reading older than this says little about today's usage: it goes. */
const KEPT_SECONDS = 3 * 24 * 3600;

export function crmUsageKey(keys: Keys, installationId: string): string {
  return `${keys.inst(installationId)}:crm-usage`;
}

/** The readings in Redis, one per installation: a store, built in stores.ts and handed to the runtime. */
export class CrmUsageStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  /** The installation's last reading, from any process; null when none is kept or it cannot be read. */
  async last(installationId: string): Promise<CrmUsageReading | null> {
    const raw = await this.redis.get(crmUsageKey(this.keys, installationId));
    if (!raw) return null;
    try {
      const parsed = JSON.parse(raw) as Partial<CrmUsageReading>;
      if (typeof parsed.summary !== 'string' || typeof parsed.at !== 'string') return null;
      return {
        summary: parsed.summary,
        at: parsed.at,
        ...(typeof parsed.used === 'number' ? { used: parsed.used } : {}),
        ...(typeof parsed.limit === 'number' ? { limit: parsed.limit } : {}),
      };
    } catch {
      return null;
    }
  }

  /**
   * A connector's `onUsage` (ConnectorInput.onUsage): its readings noted in Redis, the first at once, then at
   * most every few seconds, the last of a burst once its few seconds are over. One per connector. A failed
   * write is only a missing reading: the call that carried it is untouched.
   */
  recorder(installationId: string, now: () => number = Date.now): UsageListener {
    const key = crmUsageKey(this.keys, installationId);
    let latest: ApiUsage | null = null;
    let writtenAt = Number.NEGATIVE_INFINITY;
    let trailing = false;
    const note = () => {
      const t = now();
      if (t - writtenAt < WRITE_EVERY_MS) {
        if (trailing) return;
        trailing = true;
        setTimeout(
          () => {
            trailing = false;
            note();
          },
          writtenAt + WRITE_EVERY_MS - t,
        ).unref();
        return;
      }
      if (!latest) return;
      writtenAt = t;
      const reading: CrmUsageReading = { ...latest, at: new Date(t).toISOString() };
      this.redis.set(key, JSON.stringify(reading), 'EX', KEPT_SECONDS).catch(() => undefined);
    };
    return (usage) => {
      latest = usage;
      note();
    };
  }
}
