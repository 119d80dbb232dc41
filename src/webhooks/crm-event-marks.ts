import { execOrThrow, type RedisClient } from '../redis.js';
import type { Keys } from '../storage/keys.js';

/**
 * Which CRM webhook events were already taken in, by event id, for as long as a delivery's signature is
 * accepted (5 minutes, the longest a connector's webhook signature check allows): a repeated delivery inside that window is acknowledged and
 * dropped. The mark is written only once the event's changes are queued, so a delivery that failed (503) is
 * taken in when it is sent again, and a mark written by Redis after our command timed out only drops a
 * delivery whose changes were queued already. The marks share the `{inbox}` slot with the report events'
 * (storage/keys.ts), so one pipeline reads or writes a whole delivery's marks on a cluster too.
 */

/** The window a signed delivery is accepted in (each connector's webhook signature check, connectors/<crm>/). */
export const CRM_EVENT_MARK_SECONDS = 5 * 60;

export class CrmEventMarks {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    /** The CRM's kind (`installation.crm`): its marks are apart from any other sender's. */
    private readonly source: string,
  ) {}

  /** The ids of these that were not taken in within the window. */
  async unseen(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.exists(this.keys.eventSeen(this.source, id));
    const answers = (await pipeline.exec()) ?? [];
    const out = new Set<string>();
    ids.forEach((id, i) => {
      const [err, found] = answers[i] ?? [new Error('no answer'), null];
      if (err) throw err;
      if (Number(found) === 0) out.add(id);
    });
    return out;
  }

  /** Marks these ids taken in (SET NX with the window as TTL: a first mark's time is kept). */
  async remember(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    const pipeline = this.redis.pipeline();
    for (const id of ids) {
      pipeline.set(this.keys.eventSeen(this.source, id), '1', 'EX', CRM_EVENT_MARK_SECONDS, 'NX');
    }
    await execOrThrow(pipeline);
  }
}
