import { html, type SafeHtml } from '../html.js';

/**
 * Where a single decision on the review or links page lands: the same list place (search, page, page size),
 * the message just before the item that took the decided one's place, and keyboard focus on that item's first
 * action. Each item's forms carry the page's list place (`return`) and the item after it (`next`); the
 * redirect carries them back with `record` (who was decided) and the anchor of the message, so it works
 * without the script; the page's script only moves focus.
 */

/** The list places a return may keep: the review queue's and the links page's lists. */
const RETURN_KEYS = ['page', 'per', 'q', 'linked-page', 'linked-q', 'np-page', 'np-q', 'dl-q'] as const;
const MAX_VALUE = 200;

/** The anchor of a done message placed in a list. */
export const DONE_ANCHOR = 'done';

/** The id of an item's first action, which takes focus after the decision on the item before it. */
export function focusId(recordId: string): string {
  return `act-${recordId}`;
}

/** The page's list place as a query string, for a form to send back (only the known list parameters). */
export function returnQuery(query: Record<string, string>): string {
  const q = new URLSearchParams();
  for (const key of RETURN_KEYS) {
    const value = query[key];
    if (value !== undefined && value !== '') q.set(key, value.slice(0, MAX_VALUE));
  }
  return q.toString();
}

/** The hidden fields of a decision's form: where to come back and which item takes focus then. */
export function returnFields(back: { query: string; next: string | null } | undefined): SafeHtml | string {
  if (!back) return '';
  return html`<input type="hidden" name="return" value="${back.query}">${back.next ? html`<input type="hidden" name="next" value="${back.next}">` : ''}`;
}

/**
 * The redirect's query after a decision: the list place the form sent (known keys only, bounded), the done
 * code, the decided record and the item to focus.
 */
export function afterActionQuery(
  body: Record<string, unknown>,
  done: string,
  recordId: string,
  isRecordId: (value: string) => boolean,
): string {
  const q = sentPlace(body);
  q.set('done', done);
  q.set('record', recordId);
  // The anchor is the next item's first action: the browser focuses a focusable fragment target by itself,
  // so focus lands there without the script (an anchor that is gone leaves the page at its top, where the
  // message then is).
  const next = typeof body.next === 'string' && isRecordId(body.next) ? body.next : null;
  if (next) q.set('next', next);
  return `?${q.toString()}#${next ? focusId(next) : DONE_ANCHOR}`;
}

/** The list place a form sent back (`return`): the known list parameters only, each bounded. */
export function sentPlace(body: Record<string, unknown>): URLSearchParams {
  const sent = typeof body.return === 'string' ? new URLSearchParams(body.return.slice(0, 2_000)) : null;
  const q = new URLSearchParams();
  for (const key of RETURN_KEYS) {
    const value = sent?.get(key);
    if (value) q.set(key, value.slice(0, MAX_VALUE));
  }
  return q;
}

/**
 * A done message in a list, with the id of the element that takes focus (else the message, by the script). It
 * has no tabindex of its own: a browser moves focus to the fragment target, or away from a target that cannot
 * take it, after the scripts ran.
 */
export function doneNotice(message: string, focus: string | null): SafeHtml {
  return html`<div class="notice done-notice" role="status" id="${DONE_ANCHOR}" data-done-notice${focus ? html` data-focus="${focus}"` : ''}><p>${message}</p></div>`;
}

/** A done message to place in a list: the sentence, and the record whose item should take focus. */
export interface PlacedNotice {
  message: string;
  /** The item after the decided one (from the form); placed before it when it is on the page. */
  next: string | null;
}
