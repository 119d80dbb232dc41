import { describe, expect, it } from 'vitest';
import { tabOfOldQuery } from '../src/admin/installation-pages.js';
import { weightedScoreBuckets } from '../src/admin/overview.js';
import { listParams, listPlace, pageCount } from '../src/admin/views/list-paging.js';
import { isStale, previewSection } from '../src/admin/views/preview.js';
import type { RunSummary } from '../src/storage/runs.js';

function preview(state: RunSummary['state'], startedAt: string): RunSummary {
  const statuses = { matched: 1, needs_review: 0, no_match: 0, not_published: 0, requested: 0, error: 0 };
  return {
    id: 'preview-1',
    installationId: 'i',
    kind: 'preview',
    state,
    startedAt,
    finishedAt: null,
    stoppedReason: null,
    recordsListed: 1,
    batchesTotal: 1,
    batchesDone: state === 'done' ? 1 : 0,
    totals: { records: 1, wouldWrite: 1, unchanged: 0, failed: 0, written: 0, skipped: 0, statuses },
    errors: [],
    samples: [],
  } as unknown as RunSummary;
}

const view = { id: 'i', connection: { state: 'connected' } };

describe('the preview section', () => {
  it('asks the page script to refresh it while it runs, and not once it is done', () => {
    const running = previewSection({
      view,
      preview: preview('processing', '2026-01-01T10:00:00Z'),
      csrf: null,
      error: null,
    });
    expect(running.value).toContain('data-preview-refresh="3"');
    const done = previewSection({
      view,
      preview: preview('done', '2026-01-01T10:00:00Z'),
      csrf: null,
      error: null,
    });
    expect(done.value).not.toContain('data-preview-refresh');
  });

  it('marks a finished preview older than the last change as out of date, a newer one not', () => {
    const p = preview('done', '2026-01-01T10:00:00Z');
    expect(isStale(p, '2026-01-01T10:05:00Z')).toBe(true);
    expect(isStale(p, '2026-01-01T09:55:00Z')).toBe(false);
    expect(isStale(p, null)).toBe(false);
    const stale = previewSection({
      view,
      preview: p,
      lastChange: '2026-01-01T10:05:00Z',
      csrf: null,
      error: null,
    });
    expect(stale.value).toContain('data-preview-stale');
    expect(stale.value).toContain('older than the installation');
    const fresh = previewSection({
      view,
      preview: p,
      lastChange: '2026-01-01T09:00:00Z',
      csrf: null,
      error: null,
    });
    expect(fresh.value).not.toContain('data-preview-stale');
    // A running preview is never called stale: it is being made now.
    const running = previewSection({
      view,
      preview: preview('processing', '2026-01-01T10:00:00Z'),
      lastChange: '2026-01-01T10:05:00Z',
      csrf: null,
      error: null,
    });
    expect(running.value).not.toContain('data-preview-stale');
  });
});

describe('the single page’s old URLs', () => {
  it('send review paging and the done of a change made elsewhere to the page that holds them', () => {
    expect(tabOfOldQuery({ page: '2' })).toBe('review');
    expect(tabOfOldQuery({ per: '50' })).toBe('review');
    expect(tabOfOldQuery({ done: 'unlinked' })).toBe('links');
    expect(tabOfOldQuery({ done: 'run-undone' })).toBe('links');
    expect(tabOfOldQuery({ done: 'report-requested' })).toBe('requests');
    expect(tabOfOldQuery({ done: 'key-saved' })).toBe('settings');
    expect(tabOfOldQuery({ done: 'sync-started' })).toBeNull();
    expect(tabOfOldQuery({})).toBeNull();
  });
});

describe('list places', () => {
  it('reads a list’s own page and search, and bad values as the first page', () => {
    const params = listParams('nm');
    expect(listPlace({ 'nm-page': '3', 'nm-q': ' acme ' }, params, 20)).toEqual({
      page: 3,
      per: 20,
      query: 'acme',
    });
    expect(listPlace({ 'nm-page': '-1', page: '4' }, params, 20)).toEqual({ page: 1, per: 20, query: '' });
    expect(listPlace({ 'nm-page': 'x' }, params, 20).page).toBe(1);
    expect(pageCount(0, 20)).toBe(1);
    expect(pageCount(41, 20)).toBe(3);
  });

  it('score counts by integer part give the chart its buckets', () => {
    const buckets = weightedScoreBuckets(
      new Map([
        [0, 2],
        [55, 3],
        [100, 1],
      ]),
      10,
    );
    expect(buckets.map((b) => b.count)).toEqual([2, 0, 0, 0, 0, 3, 0, 0, 0, 1]);
  });
});
