import type { CardLinkSource, CardMatchStatus, CardRequestState } from './card-data.js';

/**
 * Every sentence the card shows, in one place: what a state means and what happens next. The card, its tests
 * and the preview read them from here.
 */

/** Who made the link, in words (`report_link_source`). */
export const LINK_SOURCE_WORDS: Record<CardLinkSource, string> = {
  auto: 'Linked automatically by the connector’s matching.',
  person: 'Linked by hand: someone set the report slug on this company.',
  admin: 'Linked by an admin on the connector’s review page.',
  request: 'Linked to the report that was requested for this company.',
};

/** What each match status means for the seller, and what happens next. */
export const STATUS_SENTENCES: Record<Exclude<CardMatchStatus, 'matched'>, string> = {
  needs_review:
    'Several published reports could be this company. Pick the right one, or say none of them is; the connector writes your choice to this record.',
  no_match:
    'No published report matches this company. You can request one; the record is linked when the report is published.',
  not_published:
    'The linked report is not published at the moment. The score comes back on its own when the report is published again.',
  requested:
    'A report was requested for this company. The record is linked and scored as soon as the report is published.',
  error:
    'The connector could not read the linked report the last time it tried. It tries again on the next sync; if this stays, ask your admin.',
};

export const NEVER_SYNCED_SENTENCE =
  'The connector has not written this company yet. Its score appears after the next sync.';

export const NO_VERIFICATION_SENTENCE =
  'This report is not verified: the score is the publisher’s own, not checked by a verifier.';

export const NO_PREVIOUS_SENTENCE = 'No earlier score: this is the first score the record has had.';

export const UNREACHABLE_SENTENCE =
  'The report connector could not be reached. The fields on this record still hold the last score; try again in a minute.';

export const REFUSED_SENTENCE =
  'The report connector refused this request (its signature was not accepted). Ask your admin to check the app’s installation.';

export const NOT_FOUND_SENTENCE =
  'The report connector does not know this company for this HubSpot account. Ask your admin whether the app is installed and connected here.';

export const BUSY_SENTENCE = 'The report connector is busy with this account’s requests.';

export const REVIEW_PRESELECT_NONE_SENTENCE = 'The best candidates are tied, so none is chosen for you.';

/** A report request's state, in words. */
export const REQUEST_STATE_WORDS: Record<CardRequestState, string> = {
  pending: 'Requested: waiting for the report to be published.',
  linked: 'The requested report was published and linked.',
  review: 'The requested report was published; it waits for a review because it was not a clear match.',
  cancelled: 'The request was cancelled.',
};

export function retryAfterSentence(seconds: number | undefined): string {
  return seconds
    ? `${BUSY_SENTENCE} Try again in ${seconds} seconds.`
    : `${BUSY_SENTENCE} Try again shortly.`;
}

/** A date for people: `3 Nov 2026`, in UTC so the card reads the same everywhere (and in tests). */
export function formatDay(iso: string | null): string | null {
  if (!iso) return null;
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return null;
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  return `${at.getUTCDate()} ${months[at.getUTCMonth()]} ${at.getUTCFullYear()}`;
}

/** A score as written: whole numbers stay whole, others keep one decimal. */
export function formatScore(score: number): string {
  return Number.isInteger(score) ? String(score) : score.toFixed(1);
}
