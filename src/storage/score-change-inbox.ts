import { z } from 'zod';
import type { RedisClient } from '../redis.js';
import { DEDUP_TTL_SECONDS, EVENT_LOG_SIZE, type EventLogEntry } from '../webhooks/event-log.js';
import type { Keys } from './keys.js';
import { RedisScript } from './redis-script.js';

/**
 * Acknowledged `score.changed` events waiting to be fanned out, one entry per slug (the latest event wins). An
 * event is accepted in one Redis round trip: its duplicate marker, its line in the event log (both
 * webhooks/event-log.ts's keys) and its slug's mark are written by one script, so a 2xx means all three are
 * in Redis and a failed one means none is (the sender's retry is then not a duplicate). A storm of N events on
 * K reports leaves K marks, each counting its events; the fan-out (`score-changes` job,
 * Pipeline.drainScoreChanges) takes the marks with the fewest events first, so a single change is fanned out
 * ahead of a storm's repeats, and a slug with many events counts as hot (deferrable). Taken marks move to a `draining` hash until their fan-out is done, so a killed fan-out's marks are
 * taken up again by the next one.
 */

export type AcceptOutcome = 'duplicate' | 'marked' | 'marked_kick';

/** Events of one slug are counted in windows this long; HOT_EVENTS in one window make the slug hot. */
export const HEAT_WINDOW_MS = 10_000;
export const HOT_EVENTS = 3;

/** How long the kick mark outlives a fan-out that died without clearing it. */
export const KICK_TTL_MS = 15_000;

const ACCEPT = new RedisScript(`
if not redis.call('SET', KEYS[1], '1', 'EX', ARGV[1], 'NX') then return 0 end
redis.call('LPUSH', KEYS[2], ARGV[2])
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[3]) - 1)
redis.call('HSET', KEYS[3], ARGV[4], ARGV[5])
redis.call('ZINCRBY', KEYS[4], 1, ARGV[4])
if redis.call('INCR', KEYS[6]) == 1 then redis.call('PEXPIRE', KEYS[6], ARGV[7]) end
if redis.call('SET', KEYS[5], '1', 'PX', ARGV[6], 'NX') then return 2 end
return 1`);

// Empty: the kick mark goes in the same step, so the next accepted event queues a fan-out again.
const TAKE = new RedisScript(`
local slugs = redis.call('ZRANGE', KEYS[2], 0, tonumber(ARGV[1]) - 1)
if #slugs == 0 then
  redis.call('DEL', KEYS[4])
  return {}
end
local out = {}
for _, slug in ipairs(slugs) do
  local id = redis.call('HGET', KEYS[1], slug)
  local count = redis.call('ZSCORE', KEYS[2], slug)
  redis.call('HDEL', KEYS[1], slug)
  redis.call('ZREM', KEYS[2], slug)
  if id then
    redis.call('HSET', KEYS[3], slug, id)
    table.insert(out, slug)
    table.insert(out, id)
    table.insert(out, count)
  end
end
return out`);

/** TAKE's reply: slug, event id, event count, slug, … */
const takenSchema = z.array(z.string());

export interface MarkedSlug {
  slug: string;
  eventId: string;
  /** Events on the slug since it was last taken (leftovers: 1). */
  events: number;
}

export class ScoreChangeInbox {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  /** Records the event and marks its slug; `marked_kick`: no fan-out is queued, the caller queues one. */
  async accept(entry: EventLogEntry & { slug: string }): Promise<AcceptOutcome> {
    const k = this.keys;
    const result = await ACCEPT.run(
      this.redis,
      [
        k.eventSeen(entry.source, entry.id),
        k.events(),
        k.scoreInbox(),
        k.scoreInboxOrder(),
        k.scoreInboxKick(),
        k.slugHeat(entry.slug),
      ],
      [
        DEDUP_TTL_SECONDS,
        JSON.stringify(entry),
        EVENT_LOG_SIZE,
        entry.slug,
        entry.id,
        KICK_TTL_MS,
        HEAT_WINDOW_MS,
      ],
    );
    return result === 0 ? 'duplicate' : result === 2 ? 'marked_kick' : 'marked';
  }

  /** Up to `max` marks, fewest events first, moved to `draining`; none left also clears the kick mark. */
  async take(max: number): Promise<MarkedSlug[]> {
    const k = this.keys;
    const flat = takenSchema.parse(
      await TAKE.run(
        this.redis,
        [k.scoreInbox(), k.scoreInboxOrder(), k.scoreInboxDraining(), k.scoreInboxKick()],
        [max],
      ),
    );
    const out: MarkedSlug[] = [];
    for (let i = 0; i + 2 < flat.length; i += 3) {
      out.push({ slug: flat[i]!, eventId: flat[i + 1]!, events: Number(flat[i + 2]) });
    }
    return out;
  }

  /** Marks a fan-out took and never finished. */
  async leftovers(): Promise<MarkedSlug[]> {
    const all = await this.redis.hgetall(this.keys.scoreInboxDraining());
    return Object.entries(all).map(([slug, eventId]) => ({ slug, eventId, events: 1 }));
  }

  /** The slug's fan-out is done (unless a newer event of it was taken meanwhile). */
  async done(mark: MarkedSlug): Promise<void> {
    await this.redis.eval(
      "if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then redis.call('HDEL', KEYS[1], ARGV[1]) end",
      1,
      this.keys.scoreInboxDraining(),
      mark.slug,
      mark.eventId,
    );
  }

  /** Whether `slug` is in a storm: HOT_EVENTS or more score changes in its current heat window. */
  async isHot(slug: string): Promise<boolean> {
    return Number((await this.redis.get(this.keys.slugHeat(slug))) ?? 0) >= HOT_EVENTS;
  }

  /** Marks waiting, for the admin page and the tests. */
  async waiting(): Promise<number> {
    return this.redis.zcard(this.keys.scoreInboxOrder());
  }
}
