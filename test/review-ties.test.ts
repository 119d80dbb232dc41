import { describe, expect, it } from 'vitest';
import { cardDataOf } from '../connectors/hubspot/card/card-view.js';
import { preselectedCandidate } from '../connectors/hubspot/card/ui/card-data.js';
import type { MassPreview } from '../src/admin/mass-actions.js';
import { confirmPage } from '../src/admin/views/confirm.js';
import { reviewItemView } from '../src/admin/views/parts.js';
import { topTied } from '../src/storage/review-ties.js';

/**
 * Ties on the review queue: a record whose first candidate nothing puts ahead of the next is never accepted by
 * "the first candidate" and has no candidate chosen for the person. A candidate's score is its report's, never
 * evidence that it is the record's company.
 */

const c = (name: string, why: string | undefined, score: number | null = null) => ({
  slug: `${name}-${why}-${score}`.toLowerCase().replace(/[^a-z0-9]+/g, '-'),
  name,
  why,
  score,
});

describe('topTied', () => {
  it('namesakes the record cannot tell apart are tied, whatever their reports score', () => {
    expect(
      topTied({ candidates: [c('Harbor Lantern', 'same name', 81), c('Harbor Lantern', 'same name', 40)] }),
    ).toBe(true);
    // Names alike only after legal forms are set aside: the matcher's reason says both are the record's name.
    expect(
      topTied({ candidates: [c('Harbor Lantern GmbH', 'same name'), c('Harbor Lantern AG', 'same name')] }),
    ).toBe(true);
    // A reason kept from before reasons were written: only the same name twice is known to be a tie.
    expect(
      topTied({ candidates: [c('Harbor Lantern', undefined, 1), c('harbor  lantern', undefined, 2)] }),
    ).toBe(true);
  });

  it('a first candidate ahead on the name or on the record’s facts is not tied', () => {
    expect(
      topTied({
        candidates: [
          c('Harbor Lantern', 'same name'),
          c('Harbor Lanterns', 'name differs by a small spelling difference'),
        ],
      }),
    ).toBe(false);
    expect(
      topTied({
        candidates: [
          c('Harbor Lantern', 'same name; same country, city'),
          c('Harbor Lantern', 'same name; same country'),
        ],
      }),
    ).toBe(false);
    expect(
      topTied({
        candidates: [c('Harbor Lantern', 'same name'), c('Harbor Lantern', 'same name; in another industry')],
      }),
    ).toBe(false);
    expect(topTied({ candidates: [c('Harbor Lantern', 'same name', 50)] })).toBe(false);
    expect(
      topTied({ candidates: [c('Harbor Lantern', undefined, 50), c('Quill Mills', undefined, 50)] }),
    ).toBe(false);
  });

  it('a first candidate behind the second on the record’s facts is not taken either', () => {
    expect(
      topTied({
        candidates: [
          c('Harbor Lantern', 'same name; in another industry'),
          c('Harbor Lantern', 'same name; same industry'),
        ],
      }),
    ).toBe(true);
  });
});

describe('the card and the confirmation on a tie', () => {
  it('the card pre-selects nothing for tied candidates, and the first of candidates in order', () => {
    const data = cardDataOf({
      record: { id: '7', name: 'Harbor Lantern', fields: { matchStatus: 'needs_review' } },
      review: {
        recordId: '7',
        name: 'Harbor Lantern',
        at: new Date(0).toISOString(),
        candidates: [
          { slug: 'a', name: 'Harbor Lantern', score: 90, why: 'same name' },
          { slug: 'b', name: 'Harbor Lantern', score: 40, why: 'same name' },
        ],
      },
      request: null,
    } as unknown as Parameters<typeof cardDataOf>[0]);
    expect(data.review?.tied).toBe(true);
    expect(preselectedCandidate(data.review!.candidates, data.review!.tied)).toBeNull();
    const cand = data.review!.candidates;
    expect(preselectedCandidate([cand[1]!, cand[0]!], false)).toBe('b');
  });

  it('the confirmation counts tied records apart', () => {
    const preview: MassPreview = {
      request: { kind: 'review', bulk: { action: 'accept-first', recordIds: ['1', '2', '3'] } },
      count: 1,
      sample: [],
      leftAlone: { tied: 2 },
      confirm: 'x',
    };
    const page = String(
      confirmPage({
        installationId: 'i',
        installationTitle: 'I',
        heading: 'Accept',
        preview,
        action: '/x',
        fields: [],
        confirmLabel: 'Accept them',
        cancelHref: '/',
        changed: false,
        csrfToken: null,
      }),
    );
    expect(page).toMatch(/2 tied, left alone: .*pick one yourself/);
  });
});

describe('the review page on a tie', () => {
  it('marks a tied item as one to pick by hand, and only a tied one', () => {
    const item = (why2: string) => ({
      recordId: '9',
      name: 'Harbor Lantern',
      country: null,
      industry: null,
      at: new Date(0).toISOString(),
      candidates: [c('Harbor Lantern', 'same name', 80), c('Harbor Lantern', why2, 20)],
    });
    expect(String(reviewItemView('i', item('same name'), null))).toContain('data-tied');
    expect(String(reviewItemView('i', item('same name; in another industry'), null))).not.toContain(
      'data-tied',
    );
  });
});
