import { describe, expect, it } from 'vitest';
import { HOT_EVENTS, KICK_TTL_MS, ScoreChangeInbox } from '../src/pipeline/score-changes/inbox.js';
import { EventLog } from '../src/storage/event-log.js';
import { Keys } from '../src/storage/keys.js';
import { redisWithFreshPrefixes } from './support/redis-prefixes.js';
import { inboxEntry } from './support/report-webhooks.js';

/**
 * Issue 13, "work proportional to reports, not events": the inbox a verified score.changed lands in. Against a
 * real Redis under a fresh prefix per test.
 */

const { redis, freshPrefix } = redisWithFreshPrefixes('inbox');

function fresh(): { inbox: ScoreChangeInbox; events: EventLog; keys: Keys } {
  const keys = new Keys(freshPrefix());
  return { inbox: new ScoreChangeInbox(redis(), keys), events: new EventLog(redis(), keys), keys };
}

const event = inboxEntry;

describe('ScoreChangeInbox', () => {
  it('a storm of N events on K slugs leaves K marks, the latest event of each', async () => {
    const { inbox, events } = fresh();
    const outcomes: string[] = [];
    for (let i = 0; i < 300; i++) outcomes.push(await inbox.accept(event(`e${i}`, `slug-${i % 7}`)));
    // The first event asks for a fan-out; every later one finds one queued.
    expect(outcomes[0]).toBe('marked_kick');
    expect(outcomes.slice(1).every((o) => o === 'marked')).toBe(true);
    expect(await inbox.waiting()).toBe(7);
    const taken = await inbox.take(100);
    // 300 = 6 × 43 + 42: slug-6 had 42 events, the others 43 each; fewest first.
    expect(taken[0]).toMatchObject({ slug: 'slug-6', eventId: 'e293', events: 42 });
    // Latest wins: slug-0's last event is e294 (294 % 7 === 0).
    expect(taken.find((m) => m.slug === 'slug-0')).toMatchObject({
      slug: 'slug-0',
      eventId: 'e294',
      events: 43,
    });
    expect(taken).toHaveLength(7);
    // Every event is in the log and its duplicate marker set, in the same step.
    expect(await events.wasReceived('reports', 'e0')).toBe(true);
    expect(await events.wasReceived('reports', 'e299')).toBe(true);
    expect((await events.recent(1))[0]?.id).toBe('e299');
  });

  it('a single change is taken before a storm that began earlier', async () => {
    const { inbox } = fresh();
    for (let i = 0; i < 50; i++) await inbox.accept(event(`s${i}`, `storm-${i % 5}`));
    await inbox.accept(event('single', 'quiet'));
    const [first] = await inbox.take(1);
    expect(first).toMatchObject({ slug: 'quiet', eventId: 'single', events: 1 });
  });

  it("decides each mark's lane when it accepts the event and carries it through the take and its leftovers", async () => {
    const { inbox } = fresh();
    await inbox.accept(event('q1', 'quiet'));
    for (let i = 0; i < HOT_EVENTS; i++) await inbox.accept(event(`h${i}`, 'storm'));
    const taken = await inbox.take(10);
    expect(Object.fromEntries(taken.map((m) => [m.slug, m.lane]))).toEqual({ quiet: 'urgent', storm: 'hot' });
    expect(Object.fromEntries((await inbox.leftovers()).map((m) => [m.slug, m.lane]))).toEqual({
      quiet: 'urgent',
      storm: 'hot',
    });
    // The event that makes a slug hot is taken between a storm's takes, like a single change, so its fan-out
    // moves the slug's pending update to the hot lane before that update runs; the storm's later ones are not.
    await inbox.accept(event('w1', 'warming'));
    await inbox.accept(event('w2', 'warming'));
    expect(await inbox.take(10, 'singles')).toMatchObject([{ slug: 'warming', lane: 'urgent' }]);
    await inbox.accept(event('w3', 'warming'));
    expect(await inbox.take(10, 'singles')).toMatchObject([{ slug: 'warming', lane: 'hot' }]);
    await inbox.accept(event('w4', 'warming'));
    expect(await inbox.take(10, 'singles')).toEqual([]);
  });

  it('a mark without a lane (accepted or taken by an older release) is taken and done without one', async () => {
    const { inbox, keys } = fresh();
    await inbox.accept(event('o1', 'old'));
    await redis().hdel(keys.scoreInboxLane(), 'old');
    const [taken] = await inbox.take(10);
    expect(taken).toMatchObject({ slug: 'old', eventId: 'o1' });
    expect(taken?.lane).toBeUndefined();
    await redis().hset(keys.scoreInboxDraining(), 'older', 'o0');
    expect((await inbox.leftovers()).find((m) => m.slug === 'older')?.lane).toBeUndefined();
    await inbox.done(taken!);
    expect(await redis().hlen(keys.scoreInboxDrainingLane())).toBe(0);
  });

  it('a redelivery is a duplicate and marks nothing', async () => {
    const { inbox } = fresh();
    expect(await inbox.accept(event('e1', 'a'))).toBe('marked_kick');
    await inbox.take(10);
    expect(await inbox.accept(event('e1', 'a'))).toBe('duplicate');
    expect(await inbox.waiting()).toBe(0);
  });

  it('a take that finds nothing clears the kick, so the next event queues a fan-out again', async () => {
    const { inbox } = fresh();
    expect(await inbox.accept(event('e1', 'a'))).toBe('marked_kick');
    expect(await inbox.accept(event('e2', 'b'))).toBe('marked');
    expect((await inbox.take(10)).length).toBe(2);
    // A mark arriving while the fan-out runs needs no new kick: the running fan-out takes it.
    expect(await inbox.accept(event('e3', 'c'))).toBe('marked');
    expect((await inbox.take(10)).map((m) => m.slug)).toEqual(['c']);
    expect(await inbox.take(10)).toEqual([]);
    expect(await inbox.accept(event('e4', 'd'))).toBe('marked_kick');
  });

  it('a take of marks renews the kick mark, so a fan-out running longer than its lifetime gets no twin', async () => {
    const { inbox, keys } = fresh();
    expect(await inbox.accept(event('k1', 'a'))).toBe('marked_kick');
    // The mark has aged most of its life while the fan-out ran (a storm keeps one running for a minute).
    await redis().pexpire(keys.scoreInboxKick(), 50);
    await inbox.accept(event('k2', 'b'));
    expect((await inbox.take(10)).length).toBe(2);
    await inbox.accept(event('k3', 'c'));
    // Before, the mark lapsed 15 s into a fan-out and the next event queued a second one beside it.
    expect(await redis().pttl(keys.scoreInboxKick())).toBeGreaterThan(KICK_TTL_MS - 5_000);
    expect(await inbox.accept(event('k4', 'd'))).toBe('marked');
  });

  it('a fan-out killed after taking leaves its marks for the next one, and done clears only what it took', async () => {
    const { inbox } = fresh();
    await inbox.accept(event('e1', 'a'));
    await inbox.accept(event('e2', 'b'));
    const taken = await inbox.take(10);
    // Killed here: nothing done. The next fan-out finds them.
    expect((await inbox.leftovers()).sort((x, y) => x.slug.localeCompare(y.slug))).toEqual(taken);
    await inbox.done(taken[0]!);
    expect(await inbox.leftovers()).toEqual([taken[1]]);
    // A newer event of b taken meanwhile is not cleared by the older one's done.
    await inbox.accept(event('e3', 'b'));
    const newer = await inbox.take(10);
    expect(newer).toMatchObject([{ slug: 'b', eventId: 'e3', events: 1 }]);
    await inbox.done(taken[1]!);
    expect(await inbox.leftovers()).toMatchObject([{ slug: 'b', eventId: 'e3', events: 1 }]);
  });

  it('knows when its oldest waiting event was accepted, through the fan-out until it is done (issue 30)', async () => {
    const { inbox } = fresh();
    expect(await inbox.oldest()).toBeNull();
    const before = Date.now();
    await inbox.accept(event('o1', 'a'));
    await inbox.accept(event('o2', 'b'));
    await inbox.accept(event('o3', 'a'));
    const oldest = await inbox.oldest();
    expect(oldest).toBeGreaterThanOrEqual(before);
    expect(oldest).toBeLessThanOrEqual(Date.now());
    const taken = await inbox.take(10);
    // Taken is not done: a fan-out killed now still counts as waiting, with its first event's time.
    expect(await inbox.oldest()).toBe(oldest);
    expect(taken.find((m) => m.slug === 'a')?.since).toBe(oldest);
    expect((await inbox.leftovers()).find((m) => m.slug === 'a')?.since).toBe(oldest);
    for (const mark of taken) await inbox.done(mark);
    expect(await inbox.oldest()).toBeNull();
  });

  it("a storm's last events that open a new heat window are still a storm's (issue 30)", async () => {
    const { inbox, keys } = fresh();
    for (let i = 0; i < HOT_EVENTS; i++) await inbox.accept(event(`h${i}`, 'storm'));
    expect(await inbox.isHot('storm')).toBe(true);
    // The heat window ends (its counter lapses); the storm's tail opens a new one with a single event.
    await redis().del(keys.slugHeat('storm'));
    await inbox.accept(event('tail', 'storm'));
    // Counted alone it was a single change: its update read the storm's reports in the single changes' lane.
    expect(await inbox.isHot('storm')).toBe(true);
    await inbox.accept(event('q1', 'quiet'));
    expect(await inbox.isHot('quiet')).toBe(false);
  });

  it("takes single changes' marks alone, leaving a storm's for the next take and the kick in place (issue 30)", async () => {
    const { inbox } = fresh();
    for (let i = 0; i < 10; i++) await inbox.accept(event(`s${i}`, 'storm'));
    expect((await inbox.take(10)).map((m) => m.slug)).toEqual(['storm']);
    // The fan-out pauses after a take of only a storm's marks; meanwhile the storm goes on and a change comes.
    for (let i = 10; i < 12; i++) await inbox.accept(event(`s${i}`, 'storm'));
    await inbox.accept(event('one', 'single'));
    expect(await inbox.take(10, 'singles')).toMatchObject([{ slug: 'single', eventId: 'one', events: 1 }]);
    expect(await inbox.take(10, 'singles')).toEqual([]);
    // The storm's mark is left (even with fewer than HOT_EVENTS events since the take) and the fan-out is
    // still running: an event now queues no second one.
    expect(await inbox.waiting()).toBe(1);
    expect(await inbox.accept(event('two', 'other'))).toBe('marked');
    expect((await inbox.take(10)).map((m) => m.slug).sort()).toEqual(['other', 'storm']);
    // A single change's mark taken by a whole take is not taken again.
    expect(await inbox.take(10, 'singles')).toEqual([]);
  });
});
