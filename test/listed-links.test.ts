import { describe, expect, it } from 'vitest';
import { linkIndexOf } from '../src/app/stores.js';
import { Keys } from '../src/storage/keys.js';
import type { LinkIndex } from '../src/storage/link-index.js';
import { LISTED_LINK_TTL_MS } from '../src/storage/slug-index.js';
import { autoLinkedState } from './support/link-states.js';
import { redisWithFreshPrefixes } from './support/redis-prefixes.js';

/**
 * Records a run listed with a slug in the CRM, before their batch indexed them (issue 30): an event's fan-out
 * finds the installation, its update finds the records, and nothing is left once the installation is removed.
 */

const { redis, freshPrefix } = redisWithFreshPrefixes('listed-links');

async function installed(id: string): Promise<{ index: LinkIndex; keys: Keys }> {
  const keys = new Keys(freshPrefix());
  await redis().hset(keys.installation(id), 'id', id);
  return { index: linkIndexOf(redis(), keys), keys };
}

describe('records a run listed on a slug', () => {
  it('are found for the slug, once each, by the fan-out and the update, escaped slugs included', async () => {
    const { index, keys } = await installed('i1');
    await index.slugs.addListed('i1', [
      { recordId: 'r1', slug: 'acme|gmbh%x' },
      { recordId: 'r2', slug: 'acme|gmbh%x' },
      { recordId: 'r3', slug: 'other' },
    ]);
    await index.slugs.addListed('i1', [{ recordId: 'r1', slug: 'acme|gmbh%x' }]);
    expect((await index.slugs.listedForSlug('i1', 'acme|gmbh%x')).sort()).toEqual(['r1', 'r2']);
    expect(await index.slugs.listedForSlug('i1', 'other')).toEqual(['r3']);
    expect(await index.slugs.listedForSlug('i1', 'none')).toEqual([]);
    // Not in the index: no status, no state, nothing counted; only the fan-out and the listed links know them.
    expect(await index.slugs.recordsForSlug('i1', 'other')).toEqual([]);
    expect(await index.slugs.installationsForSlug('acme|gmbh%x')).toEqual(['i1']);
    expect(await index.slugs.installationsForSlug('other')).toEqual(['i1']);
    const ttl = await redis().pttl(keys.listedLinks('i1'));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(LISTED_LINK_TTL_MS);
  });

  it('are filed only while the installation exists, and leave no fan-out behind', async () => {
    const { index, keys } = await installed('i2');
    await redis().del(keys.installation('i2'));
    await index.slugs.addListed('i2', [{ recordId: 'r1', slug: 'gone-slug' }]);
    expect(await index.slugs.listedForSlug('i2', 'gone-slug')).toEqual([]);
    expect(await index.slugs.installationsForSlug('gone-slug')).toEqual([]);
  });

  it("leave the fan-out with the installation's removal", async () => {
    const { index } = await installed('i3');
    await index.apply('i3', [autoLinkedState('r1', 'indexed-slug', null, null)]);
    await index.slugs.addListed('i3', [{ recordId: 'r2', slug: 'listed-slug' }]);
    expect(await index.slugs.installationsForSlug('listed-slug')).toEqual(['i3']);
    await index.slugs.forgetInstallation('i3');
    expect(await index.slugs.installationsForSlug('listed-slug')).toEqual([]);
    expect(await index.slugs.installationsForSlug('indexed-slug')).toEqual([]);
  });
});
