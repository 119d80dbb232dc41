import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { sharedLinks } from '../src/admin/views/installation-page.js';
import { linkIndexOf } from '../src/app/stores.js';
import {
  conflictingPlaceDigests,
  conflictingSharedLinks,
  placeDigest,
} from '../src/matching/shared-links.js';
import { closeRedis, createRedis } from '../src/redis.js';
import { Keys } from '../src/storage/keys.js';
import { autoLinkedState } from './support/link-states.js';
import { REDIS_URL } from './support/redis-url.js';

describe('conflictingSharedLinks', () => {
  it('lists a report whose auto-linked records disagree on domain or country, not the same company twice', () => {
    const conflicts = conflictingSharedLinks([
      {
        // One company written twice: a legal form on one, no country on the other. Not a conflict.
        slug: 'same',
        records: [
          { recordId: '1', domain: 'https://www.vantorel.com/', country: 'Germany' },
          { recordId: '2', domain: 'vantorel.com', country: null },
        ],
      },
      {
        slug: 'apart',
        records: [
          { recordId: '3', domain: 'quessly.com', country: 'DE' },
          { recordId: '4', domain: 'quessly.com', country: 'France' },
        ],
      },
      {
        slug: 'domains',
        records: [
          { recordId: '5', domain: 'orvit.io', country: 'Deutschland' },
          { recordId: '6', domain: 'orvit.de', country: 'Germany' },
        ],
      },
    ]);
    expect(conflicts.map((c) => [c.slug, c.differs])).toEqual([
      ['apart', ['country']],
      ['domains', ['domain']],
    ]);
  });
});

describe('auto links shared by several records', () => {
  const prefix = `rc-test-${randomUUID().slice(0, 8)}`;
  const redis = createRedis(REDIS_URL, 'worker');
  const index = linkIndexOf(redis, new Keys(prefix));

  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.unlink(...keys);
    await closeRedis(redis);
  });

  it('keeps digests of the places of auto-linked records and groups them by report', async () => {
    // The index writes only for an installation that exists.
    await redis.hset(new Keys(prefix).installation('inst'), 'id', 'inst');
    await index.apply('inst', [
      autoLinkedState('a', 'r1', 'quessly.com', 'DE'),
      autoLinkedState('b', 'r1', 'quessly.fr', 'FR'),
      autoLinkedState('c', 'r2', 'solo.com', null),
      // The same company as `a`, written otherwise: its digests are `a`'s (they are of the normalised values).
      autoLinkedState('d', 'r3', 'https://www.quessly.com/', 'Germany'),
      autoLinkedState('e', 'r3', 'quessly.com', null),
      autoLinkedState('f', 'r3', null, null),
    ]);
    const groups = await index.sharedAutoLinks('inst');
    expect(groups).toEqual([
      {
        slug: 'r1',
        records: [
          { recordId: 'a', place: placeDigest({ domain: 'quessly.com', country: 'DE' }) },
          { recordId: 'b', place: placeDigest({ domain: 'quessly.fr', country: 'FR' }) },
        ],
      },
      {
        slug: 'r3',
        records: [
          { recordId: 'd', place: placeDigest({ domain: 'quessly.com', country: 'DE' }) },
          {
            recordId: 'e',
            place: { domain: placeDigest({ domain: 'quessly.com', country: null }).domain, country: null },
          },
          // Neither known: nothing kept beyond the auto-link itself.
          { recordId: 'f', place: null },
        ],
      },
    ]);
    expect(placeDigest({ domain: 'quessly.com', country: 'DE' }).domain).toMatch(/^[A-Za-z0-9_-]{3}$/);
    expect(conflictingPlaceDigests(groups)).toEqual([
      { slug: 'r1', recordIds: ['a', 'b'], differs: ['domain', 'country'] },
    ]);
    // A merge survivor inheriting the auto-link keeps the digests it had.
    await index.markAutoLink('inst', 'a', 'r1');
    expect((await index.sharedAutoLinks('inst'))[0]?.records[0]).toEqual({
      recordId: 'a',
      place: placeDigest({ domain: 'quessly.com', country: 'DE' }),
    });
    // No place map any more: the digests are in the record's state.
    expect(await redis.keys(`${prefix}:inst:{inst}:place*`)).toEqual([]);
    // A person's link is not the connector's: it leaves the group.
    await index.dropAutoLink('inst', 'b');
    expect((await index.sharedAutoLinks('inst')).map((g) => g.slug)).toEqual(['r3']);
  });

  it('shows them on the installation page, escaped', () => {
    const page = sharedLinks({
      sharedLinkPlacesProblem: null,
      sharedLinkConflicts: [
        {
          slug: 'r1',
          differs: ['country'],
          records: [
            { recordId: 'a', domain: '<b>x.com', country: 'DE' },
            { recordId: 'b', domain: null, country: 'FR' },
          ],
        },
      ],
    }).toString();
    expect(page).toContain('<code>r1</code> (country differs)');
    expect(page).toContain('&lt;b&gt;x.com');
    expect(page).toContain('record b (no domain, FR)');
    expect(sharedLinks({ sharedLinkConflicts: [], sharedLinkPlacesProblem: null }).toString()).toBe('');
  });

  it('says why the values are missing when the CRM could not be read', () => {
    const page = sharedLinks({
      sharedLinkPlacesProblem: 'the CRM could not be read (<down>)',
      sharedLinkConflicts: [
        {
          slug: 'r1',
          differs: ['domain'],
          records: [
            { recordId: 'a', domain: null, country: null },
            { recordId: 'b', domain: null, country: null },
          ],
        },
      ],
    }).toString();
    expect(page).toContain('not shown: the CRM could not be read (&lt;down&gt;)');
    expect(page).toContain('record a; record b');
    expect(page).not.toContain('no domain');
  });
});
