import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { Keys } from '../pipeline/keys.js';

/** The recent inbound events the admin page shows, newest first, capped. */

export const eventLogEntrySchema = z.object({
  id: z.string(),
  source: z.enum(['reports', 'hubspot']),
  type: z.string(),
  slug: z.string().nullish(),
  receivedAt: z.string(),
  outcome: z.string(),
  detail: z.string().optional(),
});
export type EventLogEntry = z.infer<typeof eventLogEntrySchema>;

export const EVENT_LOG_SIZE = 500;

export class EventLog {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
  ) {}

  async add(entry: EventLogEntry): Promise<void> {
    await this.redis
      .multi()
      .lpush(this.keys.events(), JSON.stringify(entry))
      .ltrim(this.keys.events(), 0, EVENT_LOG_SIZE - 1)
      .exec();
  }

  async recent(count = 50): Promise<EventLogEntry[]> {
    const raw = await this.redis.lrange(this.keys.events(), 0, count - 1);
    return raw.flatMap((r) => {
      const parsed = eventLogEntrySchema.safeParse(JSON.parse(r));
      return parsed.success ? [parsed.data] : [];
    });
  }
}
