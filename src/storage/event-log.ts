import { z } from 'zod';
import { storedCrmKindSchema } from '../crm-kind.js';
import type { RedisClient } from '../redis.js';
import { parseStoredJson } from '../util/json.js';
import type { Keys } from './keys.js';
import { LuaScript } from './lua-script.js';

/**
 * Inbound events: the recent ones the admin page shows (newest first, capped), and which event ids were
 * already received (so a redelivered event is acknowledged without being processed twice).
 */

export const eventLogEntrySchema = z.object({
  id: z.string(),
  /** The report service, or the CRM whose webhook it was (a stored kind: the registry is not imported here). */
  source: z.union([z.literal('reports'), storedCrmKindSchema]),
  type: z.string(),
  slug: z.string().nullish(),
  receivedAt: z.string(),
  outcome: z.string(),
  detail: z.string().optional(),
});
export type EventLogEntry = z.infer<typeof eventLogEntrySchema>;

export const EVENT_LOG_SIZE = 500;
/** Kept for the redelivery window and more. */
export const DEDUP_TTL_SECONDS = 48 * 3600;
export type EventSource = EventLogEntry['source'];

/**
 * An entry as a line of the log: the one format every writer stores (EventLog.record here, the score-change
 * inbox's accept script) and `recent` reads. Fields beyond the schema's (the inbox's slug is one) stay in the line.
 */
export function eventLogLine(entry: EventLogEntry): string {
  return JSON.stringify(entry);
}

/**
 * The duplicate mark and the log line in one step (event-record.lua); both it and the inbox's accept script
 * write through lib/event-log.lua, the log's one writer in Redis.
 */
const RECORD = LuaScript.load('event-record');
const recordReply = z.enum(['recorded', 'duplicate']);

export class EventLog {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  async recent(count = 50): Promise<EventLogEntry[]> {
    const raw = await this.redis.lrange(this.keys.events(), 0, count - 1);
    return raw.flatMap((r) => {
      const parsed = parseStoredJson(eventLogEntrySchema, r);
      return parsed ? [parsed] : [];
    });
  }

  async wasReceived(source: EventSource, eventId: string): Promise<boolean> {
    return (await this.redis.exists(this.keys.eventSeen(source, eventId))) === 1;
  }

  /**
   * The duplicate marker and the log entry in one round trip: the acknowledgement waits on both. Logged only
   * by the delivery that sets the marker: two deliveries of one event in flight at once (a retry sent while
   * the first, answered 503 on a hung Redis, still runs) both pass `wasReceived`, and the event is one event.
   */
  async record(entry: EventLogEntry): Promise<void> {
    await RECORD.run(
      this.redis,
      [this.keys.eventSeen(entry.source, entry.id), this.keys.events()],
      [DEDUP_TTL_SECONDS, eventLogLine(entry), EVENT_LOG_SIZE],
      recordReply,
    );
  }
}
