import type { CardRequestState } from './card-data.js';

/**
 * Every sentence the card shows, in one place: what a state means and what happens next. The card, its tests
 * and the preview read them from here.
 */

// The words the Salesforce component shows as well live in seller-words.ts, which the generator writes into
// both projects; the card reads them through this module like every other sentence.
export * from './seller-words.js';

/** What a seller can do in the HubSpot card, which acts for its signed user. */
export const CARD_NEXT_STEPS = {
  needs_review:
    'Pick the right one, or say none of them is; the connector writes your choice to this record.',
  no_match: 'You can request one; the record is linked when the report is published.',
} as const;

export const UNREACHABLE_SENTENCE =
  'The report connector could not be reached. The fields on this record still hold the last score; try again in a minute.';

export const REFUSED_SENTENCE =
  'The report connector refused this request (its signature was not accepted). Ask your admin to check the app’s installation.';

export const NOT_FOUND_SENTENCE =
  'The report connector does not know this company for this HubSpot account. Ask your admin whether the app is installed and connected here.';

export const BUSY_SENTENCE = 'The report connector is busy with this account’s requests.';

/**
 * Why a seller's decision or request was not done, in their words, by the connector's refusal code. The
 * connector's own messages are written for the operator (they name records by id and the admin API's actions);
 * a code not listed here shows the connector's message.
 */
export const ACTION_REFUSAL_WORDS: Readonly<Record<string, string>> = {
  NOT_IN_REVIEW:
    'This company is no longer waiting for a review: someone decided it already. Reload the card to see it.',
  NOT_A_CANDIDATE: 'That report is no longer one of the candidates. Reload the card to see the current ones.',
  REPORTS_WRITE_SCOPE_MISSING:
    'The report connector cannot request reports for this account yet. Ask your admin to allow report requests.',
  REQUEST_RECORD_LINKED:
    'This company is already linked to a report, so no request was made. Reload the card to see it.',
  REQUEST_RECORD_UNNAMED:
    'This company has no name, so no report can be requested for it. Give it a name first.',
};

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

/** The card's button for a record waiting for review: the candidates are shown after HubSpot's sign-in. */
export const REVIEW_OPEN_WORDS = 'Choose the report';

/** The title of the connector's page the card opens for a decision or a request. */
export const ACT_MODAL_TITLE = 'Report connector: sign in with HubSpot';
