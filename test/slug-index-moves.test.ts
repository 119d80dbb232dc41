import { describe, expect, it } from 'vitest';
import { linkIndexOf } from '../src/app/stores.js';
import { Keys } from '../src/storage/keys.js';
import { scanLinearHash } from '../src/storage/linear-hash.js';
import type { LinkIndex } from '../src/storage/link-index.js';
import { slugDigest } from '../src/storage/slug-digest.js';
import { autoLinkedState } from './support/link-states.js';
import { redisWithFreshPrefixes } from './support/redis-prefixes.js';

const { redis, freshPrefix } = redisWithFreshPrefixes('slug-moves');

async function installed(id: string): Promise<{ index: LinkIndex; keys: Keys }> {
  const keys = new Keys(freshPrefix());
  await redis().hset(keys.installation(id), 'id', id);
  return { index: linkIndexOf(redis(), keys), keys };
}

/** The slug index as stored: digest -> record ids. */
async function slugIndex(keys: Keys, id: string): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  await scanLinearHash(redis(), keys.slugRecords(id), (digest, ids) => {
    out.set(digest, ids.split(' ').sort());
    return true;
  });
  return out;
}

/** Two slugs whose digests are the same (31 bits: found among some tens of thousands). */
function slugsSharingADigest(): [string, string] {
  const seen = new Map<string, string>();
  for (let i = 0; ; i += 1) {
    const slug = `shared-${i}`;
    const other = seen.get(slugDigest(slug));
    if (other) return [other, slug];
    seen.set(slugDigest(slug), slug);
  }
}

describe('the slug index when records move (digests computed in TypeScript only)', () => {
  it('files a record moved by many writers at once under its final slug only', async () => {
    const { index, keys } = await installed('i1');
    await index.apply('i1', [autoLinkedState('r1', 'first', null, null)]);
    const slugs = Array.from({ length: 20 }, (_, i) => `slug-${i}`);
    await Promise.all(slugs.map((slug) => index.apply('i1', [autoLinkedState('r1', slug, null, null)])));

    const [final] = await index.slugsOf('i1', ['r1']);
    expect(slugs).toContain(final);
    expect(await slugIndex(keys, 'i1')).toEqual(new Map([[slugDigest(final!), ['r1']]]));
    for (const slug of ['first', ...slugs]) {
      expect(await index.slugs.recordsForSlug('i1', slug)).toEqual(slug === final ? ['r1'] : []);
    }
  });

  it('takes forgotten records out of the slugs they were on, escaped slugs included', async () => {
    const { index, keys } = await installed('i2');
    await index.apply('i2', [
      autoLinkedState('r1', 'a|b%c', 'a.example', 'DE'),
      autoLinkedState('r2', 'a|b%c', null, null),
      autoLinkedState('r3', 'other', null, null),
    ]);
    await index.forget('i2', ['r1', 'r3', 'never-seen']);
    expect(await index.slugsOf('i2', ['r1', 'r2', 'r3'])).toEqual([null, 'a|b%c', null]);
    expect(await slugIndex(keys, 'i2')).toEqual(new Map([[slugDigest('a%7Cb%25c'), ['r2']]]));
  });

  it('keeps a record listed when the slug named as left is its slug again', async () => {
    const { index } = await installed('i3');
    await index.apply('i3', [autoLinkedState('r1', 'a', null, null)]);
    await index.apply('i3', [autoLinkedState('r1', 'b', null, null)]);
    await index.apply('i3', [autoLinkedState('r1', 'a', null, null)]);
    // A clean-up of the first move that comes late: the record is on `a` again and stays there.
    await index.slugs.unindex('i3', ['r1', 'a']);
    expect(await index.slugs.recordsForSlug('i3', 'a')).toEqual(['r1']);
    expect(await index.slugs.recordsForSlug('i3', 'b')).toEqual([]);
  });

  it('keeps a record listed when it moves between two slugs sharing a digest', async () => {
    const { index, keys } = await installed('i4');
    const [a, b] = slugsSharingADigest();
    await index.apply('i4', [autoLinkedState('r1', a, null, null), autoLinkedState('r2', a, null, null)]);
    await index.apply('i4', [autoLinkedState('r1', b, null, null)]);
    expect(await index.slugs.recordsForSlug('i4', a)).toEqual(['r2']);
    expect(await index.slugs.recordsForSlug('i4', b)).toEqual(['r1']);
    expect(await slugIndex(keys, 'i4')).toEqual(new Map([[slugDigest(a), ['r1', 'r2']]]));
  });
});
