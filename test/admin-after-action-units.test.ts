import { describe, expect, it } from 'vitest';
import { recordIdSchema } from '../src/admin/schemas.js';
import { afterActionQuery, doneNotice, returnQuery } from '../src/admin/views/after-action.js';
import { reviewPageSizes } from '../src/admin/views/corrections.js';
import { reviewItemView } from '../src/admin/views/parts.js';
import type { ReviewItem } from '../src/storage/review-codec.js';

/**
 * What a single decision sends and where its redirect goes, without the page's script: the list place the form
 * carries, the record and the next item in the redirect, anchored at the next item's first action.
 */

const isRecordId = (v: string) => recordIdSchema.safeParse(v).success;

const item: ReviewItem = {
  recordId: '101',
  name: 'Thornquist Ceramics',
  country: 'Germany',
  industry: 'Retail',
  at: '2026-11-29T06:00:00.000Z',
  candidates: [
    { slug: 'thornquist-ceramics', name: 'Thornquist Ceramics', score: 67.1, why: 'same name' },
    { slug: 'thornquist-ceramics-de', name: 'Thornquist Ceramics', score: 72.47, why: 'same name' },
  ],
} as unknown as ReviewItem;

describe('after a single decision', () => {
  it('each form of an item sends the list place and the next item; its first Accept is the anchor', () => {
    const page = reviewItemView('hubspot-1', item, 'csrf', { query: 'q=thorn&page=2', next: '102' }).value;
    expect(page.match(/name="return" value="q=thorn&amp;page=2"/g)?.length).toBe(4);
    expect(page.match(/name="next" value="102"/g)?.length).toBe(4);
    expect(page.match(/id="act-101"/g)?.length).toBe(1);
    expect(page.indexOf('id="act-101"')).toBeLessThan(page.indexOf('thornquist-ceramics-de'));
  });

  it('keeps only the known list places, bounded, and anchors the next item', () => {
    const body = { return: 'q=thorn&page=2&per=50&evil=1&done=hacked', next: '102' };
    expect(afterActionQuery(body, 'review-linked', '101', isRecordId)).toBe(
      '?page=2&per=50&q=thorn&done=review-linked&record=101&next=102#act-102',
    );
    expect(returnQuery({ 'linked-page': '3', 'linked-q': 'acme', done: 'x', record: '1' })).toBe(
      'linked-page=3&linked-q=acme',
    );
  });

  it('without a valid next item, anchors the message instead', () => {
    expect(afterActionQuery({ next: '../x' }, 'unlinked', '101', isRecordId)).toBe(
      '?done=unlinked&record=101#done',
    );
    expect(afterActionQuery({}, 'unlinked', '101', isRecordId)).toBe('?done=unlinked&record=101#done');
  });

  it('the message is a status the page script can place; it takes no focus from the anchor itself', () => {
    const notice = doneNotice('Linked Thornquist Ceramics (record 101).', 'act-102').value;
    expect(notice).toContain('role="status"');
    expect(notice).toContain('data-focus="act-102"');
    expect(notice).not.toContain('tabindex');
  });
});

describe('the review list page sizes', () => {
  const hrefs = (html: string) =>
    [...html.matchAll(/href="([^"]+)"/g)].map((m) => m[1]!.replaceAll('&amp;', '&'));

  it('keep the search and start again at the first page', () => {
    const links = hrefs(reviewPageSizes({ id: 'hubspot-1' }, [25, 50, 100], 25, 'thorn & co').value);
    const sizes = links.filter((h) => h.includes('/review?'));
    expect(sizes).toHaveLength(2);
    for (const href of sizes) {
      const query = new URLSearchParams(href.slice(href.indexOf('?') + 1, href.indexOf('#')));
      expect(query.get('q')).toBe('thorn & co');
      expect(query.get('page')).toBeNull();
    }
  });

  it('name no search when there is none', () => {
    const links = hrefs(reviewPageSizes({ id: 'hubspot-1' }, [25, 50], 50).value);
    expect(links.find((h) => h.includes('/review?'))).toMatch(/\/review\?per=25#review$/);
  });
});
