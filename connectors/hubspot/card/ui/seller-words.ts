import type { CardLinkSource, CardMatchStatus } from './card-data.js';

/*
 * The seller-facing words both record components show: the HubSpot card (card-text.ts re-exports them) and the
 * Salesforce reportScore component, which imports them as the LWC module `c/sellerWords`. Both are built apart
 * from this repository, so the manifest generator writes this file into each project: as it is into the HubSpot
 * project, and with its types removed as `lwc/sellerWords/sellerWords.js` into the SFDX project
 * (connectors/salesforce/record-page/seller-words-module.ts). Hence it imports nothing but types.
 *
 * The role model both follow: a seller sees the score, band, verification, score history, alert, link state and
 * why a record waits; a seller acts only where the component can act for them and knows who they are (the
 * HubSpot card's signed user picks a candidate or requests a report). Nothing a seller sees links to the
 * connector's admin page, which is the operator's. What each component says a seller can do stays its own
 * (card-text.ts, reportScoreView.js).
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
