import { z } from 'zod';
import type { RedisClient } from '../../redis.js';
import {
  DEDUP_TTL_SECONDS,
  EVENT_LOG_SIZE,
  type EventLogEntry,
  eventLogLine,
} from '../../storage/event-log.js';
import type { Keys } from '../../storage/keys.js';
import { LuaScript } from '../../storage/lua-script.js';
import { InboxAcceptBatch } from './inbox-accept-batch.js';
import type { SlugLane } from './pending-slugs.js';

/**
 * Acknowledged `score.changed` events waiting to be fanned out, one entry per slug (the latest event wins). An
 * event is accepted in one Redis round trip: its duplicate marker, its line in the event log (both
 * event-log.ts's keys) and its slug's mark are written by one script, so a 2xx means all three are
 * in Redis and a failed one means none is (the sender's retry is then not a duplicate). A storm of N events on
 * K reports leaves K marks, each counting its events; the fan-out (`score-changes` job,
 * drainScoreChanges in pipeline/score-changes/fan-out.ts) takes the marks with the fewest events first, so a single change is fanned out
 * ahead of a storm's repeats. The lane of the slug's update (hot: a storm's, coalesced longer; urgent: a single
 * change) is decided here, once, when the event is accepted, and carried in the mark to the fan-out. Taken marks move to a `draining` hash until their fan-out is done, so a killed fan-out's marks are
 * taken up again by the next one.
 */

const ACCEPT_OUTCOMES = ['duplicate', 'marked', 'marked_kick'] as const;
export type AcceptOutcome = (typeof ACCEPT_OUTCOMES)[number];
/** Made once: building the schema on every acceptance was 4% of the server's CPU in a storm. */
const acceptReplySchema = z.enum(ACCEPT_OUTCOMES);
const acceptManyReplySchema = z.array(acceptReplySchema);

/**
 * Most events one accept script call takes: more wait for the next call, sent at once after it. Bounds one
 * call's keys and arguments and how long Redis runs it (about 64 events' commands, well under a millisecond).
 */
export const ACCEPT_BATCH_MAX = 64;

export type InboxEntry = EventLogEntry & { slug: string };

/** Events of one slug are counted in windows this long; HOT_EVENTS in one window make the slug hot. */
export const HEAT_WINDOW_MS = 10_000;
export const HOT_EVENTS = 3;

/** How long the kick mark outlives a fan-out that died without clearing it. */
export const KICK_TTL_MS = 15_000;

const ACCEPT_MANY = LuaScript.load('inbox-accept-many');
const TAKE = LuaScript.load('inbox-take');
const DONE = LuaScript.load('inbox-done');
const doneReply = z.enum(['done', 'newer']);

/** TAKE's reply: slug, event id, event count, accepted at, lane, slug, … */
const takenSchema = z.array(z.string());

export interface MarkedSlug {
  slug: string;
  eventId: string;
  /** Events on the slug since it was last taken (leftovers: 1). */
  events: number;
  /** When its oldest event not yet fanned out was accepted (ms); absent for events accepted by older releases. */
  since?: number;
  /**
   * The lane its update waits in, decided when its latest event was accepted; absent for events accepted by
   * older releases (the fan-out then asks `isHot`, the rule they were accepted under).
   */
  lane?: SlugLane;
}

const LANES: readonly string[] = ['hot', 'urgent'] satisfies SlugLane[];

function laneOf(raw: string | undefined): { lane?: SlugLane } {
  return raw !== undefined && LANES.includes(raw) ? { lane: raw as SlugLane } : {};
}

export class ScoreChangeInbox {
  private readonly batch = new InboxAcceptBatch<InboxEntry, AcceptOutcome>(
    (entries) => this.acceptMany(entries),
    ACCEPT_BATCH_MAX,
  );

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  /**
   * Records the event and marks its slug; `marked_kick`: no fan-out is queued, the caller queues one. The
   * events accepted within one turn of the event loop go to Redis together (InboxAcceptBatch), in one script
   * call per ACCEPT_BATCH_MAX.
   */
  accept(entry: InboxEntry): Promise<AcceptOutcome> {
    return this.batch.accept(entry);
  }

  private async acceptMany(entries: InboxEntry[]): Promise<AcceptOutcome[]> {
    const k = this.keys;
    const now = Date.now();
    const keys = [
      k.events(),
      k.scoreInbox(),
      k.scoreInboxOrder(),
      k.scoreInboxKick(),
      k.scoreInboxSince(),
      k.scoreInboxSingles(),
      k.scoreInboxLane(),
    ];
    const args: (string | number)[] = [
      DEDUP_TTL_SECONDS,
      EVENT_LOG_SIZE,
      KICK_TTL_MS,
      HEAT_WINDOW_MS,
      now,
      HOT_EVENTS,
    ];
    for (const entry of entries) {
      keys.push(k.eventSeen(entry.source, entry.id), k.slugHeat(entry.slug), k.slugWasHot(entry.slug));
      args.push(eventLogLine(entry), entry.slug, entry.id);
    }
    return ACCEPT_MANY.run(this.redis, keys, args, acceptManyReplySchema);
  }

  /**
   * Up to `max` marks, fewest events first, moved to `draining`; none left also clears the kick mark.
   * `singles`: only the marks of slugs an event marked while they were not hot (single changes, never a
   * storm's repeats), oldest first; the kick mark stays, as a storm's marks may be left for the next take.
   */
  async take(max: number, only?: 'singles'): Promise<MarkedSlug[]> {
    const k = this.keys;
    const flat = await TAKE.run(
      this.redis,
      [
        k.scoreInbox(),
        k.scoreInboxOrder(),
        k.scoreInboxDraining(),
        k.scoreInboxKick(),
        k.scoreInboxSince(),
        k.scoreInboxDrainingSince(),
        k.scoreInboxSingles(),
        k.scoreInboxLane(),
        k.scoreInboxDrainingLane(),
      ],
      only === undefined ? [max, '', KICK_TTL_MS] : [max, only],
      takenSchema,
    );
    const out: MarkedSlug[] = [];
    for (let i = 0; i + 4 < flat.length; i += 5) {
      const since = flat[i + 3] ? Number(flat[i + 3]) : undefined;
      out.push({
        slug: flat[i]!,
        eventId: flat[i + 1]!,
        events: Number(flat[i + 2]),
        ...(since === undefined ? {} : { since }),
        ...laneOf(flat[i + 4]),
      });
    }
    return out;
  }

  /** Marks a fan-out took and never finished. */
  async leftovers(): Promise<MarkedSlug[]> {
    const [all, since, lanes] = await Promise.all([
      this.redis.hgetall(this.keys.scoreInboxDraining()),
      this.redis.hgetall(this.keys.scoreInboxDrainingSince()),
      this.redis.hgetall(this.keys.scoreInboxDrainingLane()),
    ]);
    return Object.entries(all).map(([slug, eventId]) => ({
      slug,
      eventId,
      events: 1,
      ...(since[slug] ? { since: Number(since[slug]) } : {}),
      ...laneOf(lanes[slug]),
    }));
  }

  /**
   * When the oldest event still waiting for its fan-out (or in one not finished) was accepted (ms), or null
   * when none waits. Events accepted by older releases carry no time and are not seen.
   */
  async oldest(): Promise<number | null> {
    const [[, marked], draining] = await Promise.all([
      this.redis.zrange(this.keys.scoreInboxSince(), '0', '0', 'WITHSCORES'),
      this.redis.hvals(this.keys.scoreInboxDrainingSince()),
    ]);
    const all = [...(marked === undefined ? [] : [Number(marked)]), ...draining.map(Number)];
    return all.length === 0 ? null : Math.min(...all);
  }

  /** The slug's fan-out is done (unless a newer event of it was taken meanwhile). */
  async done(mark: MarkedSlug): Promise<void> {
    await DONE.run(
      this.redis,
      [
        this.keys.scoreInboxDraining(),
        this.keys.scoreInboxDrainingSince(),
        this.keys.scoreInboxDrainingLane(),
      ],
      [mark.slug, mark.eventId],
      doneReply,
    );
  }

  /**
   * The lane rule for what comes without a lane decided at accept (an alert, a slug a batch found stale, a
   * mark accepted by an older release). Whether `slug` is in a storm: HOT_EVENTS or more score changes in its current heat window, or in one of
   * the two windows before. A storm's last events open a new window of one or two events: counted alone, they
   * were single changes, and the single changes' update read the storm's reports ahead of the others'.
   */
  async isHot(slug: string): Promise<boolean> {
    const [heat, wasHot] = await this.redis.mget(this.keys.slugHeat(slug), this.keys.slugWasHot(slug));
    return wasHot !== null || Number(heat ?? 0) >= HOT_EVENTS;
  }

  /**
   * The fan-out an accept's `marked_kick` asked for could not be queued: the kick mark goes, so the next event
   * queues one instead of waiting out KICK_TTL_MS (a twin of a fan-out queued after all only shares the
   * marks: each is taken once).
   */
  async kickNotQueued(): Promise<void> {
    await this.redis.del(this.keys.scoreInboxKick());
  }

  /**
   * Whether marks wait for a fan-out (or a fan-out took some and never finished) while no fan-out is queued or
   * running (the kick mark, which a running fan-out sets again at each take, has lapsed).
   */
  async stranded(): Promise<boolean> {
    const [waiting, draining, kick] = await Promise.all([
      this.waiting(),
      this.redis.hlen(this.keys.scoreInboxDraining()),
      this.redis.exists(this.keys.scoreInboxKick()),
    ]);
    return (waiting > 0 || draining > 0) && kick === 0;
  }

  /** Marks waiting, for the admin page and the tests. */
  async waiting(): Promise<number> {
    return this.redis.zcard(this.keys.scoreInboxOrder());
  }
}
