import type { CardLinkSource, CardMatchStatus, CardRequestState } from './card-data.js';

/**
 * Every sentence the card shows, in one place: what a state means and what happens next. The card, its tests
 * and the preview read them from here.
 */

/*
 * The seller-facing words both record components share: the HubSpot card (here) and the Salesforce reportScore
 * component (connectors/salesforce/record-page/lwc/reportScore/reportScoreView.js, built apart, so it holds a
 * copy). test/seller-words.test.ts checks that both say the same for every state.
 *
 * The role model both follow: a seller sees the score, band, verification, score history, alert, link state and
 * why a record waits; a seller acts only where the component can act for them and knows who they are (the
 * HubSpot card's signed user picks a candidate or requests a report). Nothing a seller sees links to the
 * connector's admin page, which is the operator's.
 */

/** Who made the link, in words (`report_link_source`). */
export const LINK_SOURCE_WORDS: Record<CardLinkSource, string> = {
  auto: 'Linked automatically by the connector’s matching.',
  person: 'Linked by hand: someone set the report slug on this company.',
  admin: 'Linked by an admin of the report connector.',
  request: 'Linked to the report that was requested for this company.',
};

/** A short name for each state, shown above its sentence. */
export const STATE_TITLES: Record<CardMatchStatus | 'never_synced', string> = {
  matched: 'Report score',
  needs_review: 'Needs review',
  no_match: 'No report',
  not_published: 'Report not published',
  requested: 'Report requested',
  error: 'Could not read the report',
  never_synced: 'Not looked at yet',
};

/** What each state means for the seller. What they can do about it follows in the component's own words. */
export const STATUS_SENTENCES: Record<Exclude<CardMatchStatus, 'matched'>, string> = {
  needs_review:
    'Several published reports could be this company, and none is clearly it. The score appears here once one is chosen.',
  no_match: 'No published report matches this company.',
  not_published:
    'The linked report is not published at the moment. The score comes back on its own when the report is published again.',
  requested:
    'A report was requested for this company. The record is linked and scored as soon as the report is published.',
  error:
    'The connector could not read the linked report the last time it tried. It tries again on the next sync; if this stays, ask your admin.',
};

/** `no_match` after a person or an admin said that no report is this company. */
export const NO_MATCH_DECIDED_SENTENCE =
  'Someone decided that no published report is this company, so the connector will not link one on its own.';

export const NEVER_SYNCED_SENTENCE =
  'The connector has not written this company yet. Its score appears after the next sync.';

export const NO_VERIFICATION_SENTENCE =
  'This report is not verified: the score is the publisher’s own, not checked by a verifier.';

export const NO_PREVIOUS_SENTENCE = 'No earlier score: this is the first score the record has had.';

export const ALERT_TITLE = 'Active alert';

/** The link to the full report, when the record holds a web address for it. */
export const OPEN_REPORT_WORDS = 'Open the full report';

/** When the shown score was computed. */
export function scoredSentence(when: string): string {
  return `Scored on ${when}`;
}

/** What a seller can do in the HubSpot card, which acts for its signed user. */
export const CARD_NEXT_STEPS = {
  needs_review:
    'Pick the right one, or say none of them is; the connector writes your choice to this record.',
  no_match: 'You can request one; the record is linked when the report is published.',
} as const;

/** The verification line: the verdict, the verified score, and when. */
export function verificationSentence(
  verdict: string | null,
  verifiedScore: string | null,
  when: string | null,
): string {
  const parts = [`Verification: ${verdict ?? 'no verdict given'}`];
  if (verifiedScore !== null) parts.push(`verified score ${verifiedScore}`);
  return `${parts.join(', ')}${when ? `, on ${when}` : ''}.`;
}

/** The score history line: the score before its last change, its direction, and the scoring that changed it. */
export function previousSentence(
  previous: number,
  current: number | null,
  previousText: string,
  when: string | null,
): string {
  const direction =
    current === null ? '' : current > previous ? ' (up)' : current < previous ? ' (down)' : '';
  return `Previous score ${previousText}${direction}${when ? `; it changed with the scoring of ${when}` : ''}.`;
}

/** The alert line: the connector's readable alert text and when it was raised. */
export function alertSentence(text: string, when: string | null): string {
  return when ? `${text} (${when})` : text;
}

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
