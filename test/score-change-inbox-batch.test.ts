import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ACCEPT_BATCH_MAX,
  type AcceptOutcome,
  HOT_EVENTS,
  ScoreChangeInbox,
} from '../src/pipeline/score-changes/inbox.js';
import { closeRedis, createRedis, waitForRedis } from '../src/redis.js';
import { Keys } from '../src/storage/keys.js';
import { redisWithFreshPrefixes } from './support/redis-prefixes.js';
import { REDIS_URL } from './support/redis-url.js';
import { inboxEntry } from './support/report-webhooks.js';

/**
 * Issue 30: the score.changed events accepted within one turn of the event loop go to Redis as one script call
 * (storage/inbox-accept-batch.ts, lua/inbox-accept-many.lua), each caller getting its own outcome, and leave
 * Redis as accepting them one by one would. Against a real Redis under a fresh prefix per test.
 */

const { redis, freshPrefix } = redisWithFreshPrefixes('inbox-batch');

afterEach(() => {
  vi.restoreAllMocks();
});

function fresh(): { inbox: ScoreChangeInbox; keys: Keys } {
  const keys = new Keys(freshPrefix());
  return { inbox: new ScoreChangeInbox(redis(), keys), keys };
}

/** Script calls sent on the shared connection from now on. */
function countScriptCalls(): { count: () => number } {
  const client = redis();
  const evalsha = vi.spyOn(client, 'evalsha');
  return { count: () => evalsha.mock.calls.length };
}

type Entry = ReturnType<typeof inboxEntry>;

/** A storm on a few slugs with a redelivery in it: slugs become hot, others stay single changes. */
function storm(): Entry[] {
  const entries: Entry[] = [];
  for (let i = 0; i < 20; i++) entries.push(inboxEntry(`e${i}`, i < 12 ? `storm-${i % 2}` : `quiet-${i}`));
  entries.push(entries[3]!);
  return entries;
}

/** Everything an acceptance writes, times of acceptance left out (they differ between two runs). */
async function stored(keys: Keys, slugs: string[], ids: string[]) {
  const r = redis();
  const heat = await Promise.all(slugs.map((s) => r.get(keys.slugHeat(s))));
  const wasHot = await Promise.all(slugs.map((s) => r.exists(keys.slugWasHot(s))));
  const seen = await Promise.all(ids.map((id) => r.exists(keys.eventSeen('reports', id))));
  return {
    log: await r.lrange(keys.events(), 0, -1),
    inbox: await r.hgetall(keys.scoreInbox()),
    order: await r.zrange(keys.scoreInboxOrder(), '0', '-1', 'WITHSCORES'),
    since: (await r.zrange(keys.scoreInboxSince(), '0', '-1')).sort(),
    singles: (await r.zrange(keys.scoreInboxSingles(), '0', '-1')).sort(),
    kick: await r.exists(keys.scoreInboxKick()),
    heat,
    wasHot,
    seen,
  };
}

describe('ScoreChangeInbox.accept within one turn', () => {
  it('sends one script call and leaves the same state and outcomes as one by one', async () => {
    const entries = storm();
    const slugs = [...new Set(entries.map((e) => e.slug))];
    const ids = [...new Set(entries.map((e) => e.id))];

    const one = fresh();
    const calls = countScriptCalls();
    const oneByOne: AcceptOutcome[] = [];
    for (const entry of entries) oneByOne.push(await one.inbox.accept(entry));
    expect(calls.count()).toBe(entries.length);

    const together = fresh();
    const before = calls.count();
    const outcomes = await Promise.all(entries.map((entry) => together.inbox.accept(entry)));
    expect(calls.count() - before).toBe(1);

    expect(outcomes).toEqual(oneByOne);
    expect(outcomes.filter((o) => o === 'marked_kick')).toHaveLength(1);
    expect(outcomes.at(-1)).toBe('duplicate');
    const state = await stored(together.keys, slugs, ids);
    expect(state).toEqual(await stored(one.keys, slugs, ids));
    // The comparison is about something: hot slugs, single changes and the log are all there.
    expect(state.wasHot.filter(Boolean).length).toBe(2);
    expect(Number(state.heat[0])).toBeGreaterThan(HOT_EVENTS);
    expect(state.singles).toEqual(expect.arrayContaining(slugs.filter((s) => s.startsWith('quiet-'))));
    expect(state.log).toHaveLength(20);
  });

  it('counts an id seen twice in one batch as a duplicate the second time', async () => {
    const { inbox } = fresh();
    const first = inboxEntry('twice', 'acme');
    const outcomes = await Promise.all([
      inbox.accept(first),
      inbox.accept(inboxEntry('other', 'globex')),
      inbox.accept({ ...first, receivedAt: new Date().toISOString() }),
    ]);
    expect(outcomes).toEqual(['marked_kick', 'marked', 'duplicate']);
    expect(await inbox.waiting()).toBe(2);
  });

  it('gives the kick to no event of a batch when a fan-out is queued, and to one when none is', async () => {
    const { inbox } = fresh();
    const batch = (tag: string) =>
      Promise.all(Array.from({ length: 10 }, (_, i) => inbox.accept(inboxEntry(`${tag}${i}`, `s${i}`))));
    const first = await batch('a');
    expect(first.filter((o) => o === 'marked_kick')).toHaveLength(1);
    expect(await batch('b')).toEqual(Array(10).fill('marked'));
    // The fan-out takes everything and, finding nothing more, clears the kick: the next batch kicks again.
    expect(await inbox.take(100)).toHaveLength(10);
    expect(await inbox.take(100)).toEqual([]);
    expect((await batch('c')).filter((o) => o === 'marked_kick')).toHaveLength(1);
  });

  it(`splits more than ${ACCEPT_BATCH_MAX} events of one turn into several calls, still one kick`, async () => {
    const { inbox } = fresh();
    const calls = countScriptCalls();
    const n = 2 * ACCEPT_BATCH_MAX + 5;
    const outcomes = await Promise.all(
      Array.from({ length: n }, (_, i) => inbox.accept(inboxEntry(`m${i}`, `slug-${i % 40}`))),
    );
    expect(calls.count()).toBe(3);
    expect(outcomes.filter((o) => o === 'marked_kick')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'marked')).toHaveLength(n - 1);
    expect(await inbox.waiting()).toBe(40);
  });

  it('rejects every caller of a batch whose call fails, and the next turn starts afresh', async () => {
    const client = createRedis(REDIS_URL, 'producer', 'rc-test-inbox-batch-closed');
    await waitForRedis(client);
    await closeRedis(client);
    const inbox = new ScoreChangeInbox(client, new Keys(freshPrefix()));
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, (_, i) => inbox.accept(inboxEntry(`f${i}`, `slug-${i}`))),
    );
    expect(results.map((r) => r.status)).toEqual(Array(5).fill('rejected'));
    for (const r of results) {
      expect(r.status === 'rejected' && String(r.reason)).toMatch(/closed/i);
    }
    await expect(inbox.accept(inboxEntry('after', 'slug-0'))).rejects.toThrow(/closed/i);
  });
});
