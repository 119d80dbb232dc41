import type { ReviewItem } from '../../storage/review-codec.js';
import { html, type SafeHtml } from '../html.js';
import type { InstallationView } from '../overview.js';
import { REVIEW_PAGE_SIZES } from '../schemas.js';
import { doneNotice, focusId, type PlacedNotice, returnQuery } from './after-action.js';
import { bulkReviewForm, reviewPageSizes } from './corrections.js';
import { num } from './format.js';
import { installationShell, tabPath } from './installation-tabs.js';
import { type ListPlace, listNav, listParams } from './list-paging.js';
import { reviewItemView } from './parts.js';

/** `/admin/installations/:id/review`: the review queue, a page at a time, searchable by name and record id. */

export interface ReviewPageInput {
  view: InstallationView;
  /** This page's items (or the search's). */
  items: readonly ReviewItem[];
  /** Items in the queue (or found by the search). */
  total: number;
  place: ListPlace;
  /** The request's query, to keep in page links. */
  query: Record<string, string>;
  csrfToken: string | null;
  notice?: string | null;
  /** The message of a decision made on one item, placed before the item that took its place. */
  placed?: PlacedNotice | null;
  error?: string | null;
}

export const REVIEW_LIST = listParams(null);

export function reviewPage(o: ReviewPageInput): SafeHtml {
  const { view: v, place } = o;
  const per = place.per;
  const back = returnQuery(o.query);
  const placedAt =
    o.placed?.next && o.items.some((i) => i.recordId === o.placed?.next) ? o.placed.next : null;
  // The message sits in the queue, not above the tabs, so the section's anchor keeps it in view.
  const topNotice = o.placed
    ? placedAt
      ? ''
      : doneNotice(o.placed.message, null)
    : o.notice
      ? doneNotice(o.notice, null)
      : '';
  const items = o.items.map(
    (item, i) =>
      html`${placedAt === item.recordId ? doneNotice(o.placed!.message, focusId(item.recordId)) : ''}${reviewItemView(
        v.id,
        item,
        o.csrfToken,
        { query: back, next: (o.items[i + 1] ?? o.items[i - 1])?.recordId ?? null },
      )}`,
  );
  return installationShell(
    { view: v, tab: 'review', csrfToken: o.csrfToken, error: o.error },
    html`<section class="card" aria-labelledby="review">
      <h2 id="review">Review queue (${num(v.reviewCount)})</h2>
      ${topNotice}
      <p>These companies have more than one plausible report. Accept a candidate, reject them all, or type the
        slug of the right report. Each decision is written to the CRM at once. To decide many at once, select
        them and accept each one's first candidate or reject them together.</p>
      ${
        v.reviewCount === 0
          ? html`<p>Nothing waits for review.</p>`
          : html`${reviewPageSizes(v, REVIEW_PAGE_SIZES, per, place.query)}
        ${listNav({
          path: tabPath(v.id, 'review'),
          current: o.query,
          params: REVIEW_LIST,
          place,
          total: o.total,
          anchor: 'review',
          label: 'Review queue',
          searchHint: 'A company name (or part of one) or a record id.',
        })}
        ${place.query ? html`<p class="hint" role="status">${num(o.total)} found for “${place.query}”${o.total > o.items.length ? html`, the first ${num(o.items.length)} shown` : ''}.</p>` : ''}
        ${o.items.length === 0 ? html`<p>No item on this page.</p>` : html`${bulkReviewForm(v, o.items.length, o.csrfToken, { page: place.page, per }, back)}${items}`}`
      }
    </section>`,
  );
}
