import { describe, expect, it } from 'vitest';
import { PendingSlugs } from '../src/pipeline/score-changes/pending-slugs.js';
import { Keys } from '../src/storage/keys.js';
import { redisWithFreshPrefixes } from './support/redis-prefixes.js';

/**
 * Issue 13, write coalescing: the reports whose records wait for an update, per installation. Against a real
 * Redis under a fresh prefix per test.
 */

const { redis, freshPrefix } = redisWithFreshPrefixes('pending');

/** Marks are kept only for an installation that exists: these tests' two installations do. */
async function fresh(): Promise<PendingSlugs> {
  const keys = new Keys(freshPrefix());
  for (const id of ['hubspot-1', 'hubspot-2']) await redis().hset(keys.installation(id), 'id', id);
  return new PendingSlugs(redis(), keys);
}

describe('PendingSlugs', () => {
  it('many marks of one slug are one entry; lanes and installations are apart', async () => {
    const pending = await fresh();
    for (let i = 0; i < 5; i++) await pending.mark('hubspot-1', 'acme', 'urgent');
    await pending.mark('hubspot-1', 'globex', 'urgent');
    await pending.mark('hubspot-1', 'initech', 'hot');
    await pending.mark('hubspot-2', 'acme', 'urgent');
    expect((await pending.take('hubspot-1', 'urgent', 10)).map((t) => t.slug).sort()).toEqual([
      'acme',
      'globex',
    ]);
    expect((await pending.take('hubspot-1', 'hot', 10)).map((t) => t.slug)).toEqual(['initech']);
    expect(await pending.count('hubspot-2', 'urgent')).toBe(1);
  });

  it('takes the oldest marks first, at most as many as asked', async () => {
    const pending = await fresh();
    for (const slug of ['a', 'b', 'c']) await pending.mark('hubspot-1', slug, 'urgent');
    await pending.mark('hubspot-1', 'a', 'urgent'); // marked again: now the newest
    expect((await pending.take('hubspot-1', 'urgent', 2)).map((t) => t.slug)).toEqual(['b', 'c']);
  });

  it('done clears what was taken, but not a slug marked again while its update ran', async () => {
    const pending = await fresh();
    await pending.mark('hubspot-1', 'acme', 'urgent');
    await pending.mark('hubspot-1', 'globex', 'urgent');
    const taken = await pending.take('hubspot-1', 'urgent', 10);
    await pending.mark('hubspot-1', 'acme', 'urgent'); // a change arrives mid-update
    await pending.done('hubspot-1', 'urgent', taken);
    expect((await pending.take('hubspot-1', 'urgent', 10)).map((t) => t.slug)).toEqual(['acme']);
  });

  it('a killed update leaves its marks for the rerun', async () => {
    const pending = await fresh();
    await pending.mark('hubspot-1', 'acme', 'hot');
    const first = await pending.take('hubspot-1', 'hot', 10);
    // No done: the worker died. The rerun finds the same mark.
    expect(await pending.take('hubspot-1', 'hot', 10)).toEqual(first);
  });

  it("keeps when each slug's oldest unwritten change arrived, across lanes, until its marks are done (issue 30)", async () => {
    const pending = await fresh();
    expect(await pending.oldest('hubspot-1')).toBeNull();
    await pending.mark('hubspot-1', 'acme', 'urgent', 1_000);
    await pending.mark('hubspot-1', 'acme', 'urgent', 2_000);
    await pending.mark('hubspot-1', 'globex', 'urgent', 3_000);
    expect(await pending.oldest('hubspot-1')).toBe(1_000);
    const taken = await pending.take('hubspot-1', 'urgent', 10);
    // acme turns hot while its update runs: moved to the hot lane, its change is still the one of 1,000.
    await pending.mark('hubspot-1', 'acme', 'hot', 4_000);
    await pending.done('hubspot-1', 'urgent', taken);
    expect(Object.fromEntries(await pending.since('hubspot-1', ['acme', 'globex']))).toEqual({ acme: 1_000 });
    const hot = await pending.take('hubspot-1', 'hot', 10);
    await pending.done('hubspot-1', 'hot', hot);
    expect(await pending.oldest('hubspot-1')).toBeNull();
  });

  it('a mark in the hot lane takes the slug out of the urgent one, keeping when its change arrived', async () => {
    const pending = await fresh();
    await pending.mark('hubspot-1', 'acme', 'urgent', 1_000);
    await pending.mark('hubspot-1', 'globex', 'urgent', 2_000);
    await pending.mark('hubspot-1', 'acme', 'hot', 3_000);
    expect((await pending.take('hubspot-1', 'urgent', 10)).map((t) => t.slug)).toEqual(['globex']);
    expect((await pending.take('hubspot-1', 'hot', 10)).map((t) => t.slug)).toEqual(['acme']);
    expect(Object.fromEntries(await pending.since('hubspot-1', ['acme']))).toEqual({ acme: 1_000 });
    // An urgent mark never takes a slug out of the hot lane: a single change after a storm joins its update.
    await pending.mark('hubspot-1', 'acme', 'urgent', 4_000);
    expect(await pending.count('hubspot-1', 'hot')).toBe(1);
  });
});
