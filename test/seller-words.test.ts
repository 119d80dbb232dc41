import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as card from '../connectors/hubspot/card/ui/card-text.js';
// @ts-expect-error: the Salesforce component's view is plain JavaScript without declarations.
import * as lwc from '../connectors/salesforce/record-page/lwc/reportScore/reportScoreView.js';

/**
 * The HubSpot card and the Salesforce component are built apart, so each holds the seller-facing words; these
 * checks keep them one set: the same words for every state, the same lines for the same facts, and no word or
 * link that sends a seller to the connector's admin page.
 */
describe('seller-facing words', () => {
  it('both components say the same for every state', () => {
    const shared = (words: typeof card | typeof lwc) => ({
      LINK_SOURCE_WORDS: words.LINK_SOURCE_WORDS,
      STATE_TITLES: words.STATE_TITLES,
      STATUS_SENTENCES: words.STATUS_SENTENCES,
      NO_MATCH_DECIDED_SENTENCE: words.NO_MATCH_DECIDED_SENTENCE,
      NEVER_SYNCED_SENTENCE: words.NEVER_SYNCED_SENTENCE,
      NO_VERIFICATION_SENTENCE: words.NO_VERIFICATION_SENTENCE,
      NO_PREVIOUS_SENTENCE: words.NO_PREVIOUS_SENTENCE,
      ALERT_TITLE: words.ALERT_TITLE,
      OPEN_REPORT_WORDS: words.OPEN_REPORT_WORDS,
    });
    expect(shared(lwc)).toEqual(shared(card));
    expect(Object.keys(lwc.STATE_TITLES)).toHaveLength(7);
  });

  it('the same facts give the same verification, score history and alert lines', () => {
    const cases: [string | null, string | null, string | null][] = [
      ['confirmed', '71', '5 Nov 2026'],
      ['disputed', null, null],
      [null, '60', null],
    ];
    for (const [verdict, score, when] of cases) {
      expect(lwc.verificationSentence(verdict, score, when)).toBe(
        card.verificationSentence(verdict, score, when),
      );
    }
    for (const [previous, current] of [
      [84, 72],
      [61, 73],
      [70, 70],
      [70, null],
    ] as const) {
      for (const when of ['3 Nov 2026', null]) {
        expect(lwc.previousSentence(previous, current, String(previous), when)).toBe(
          card.previousSentence(previous, current, String(previous), when),
        );
      }
    }
    expect(card.previousSentence(84, 72, '84', null)).toBe('Previous score 84 (down).');
    const alert = 'High alert, score drop: Score fell — the overall score dropped 12 points';
    expect(lwc.scoredSentence('3 Nov 2026')).toBe(card.scoredSentence('3 Nov 2026'));
    expect(lwc.alertSentence(alert, '3 Nov 2026')).toBe(card.alertSentence(alert, '3 Nov 2026'));
  });

  it('the card acts for its signed user; the Salesforce component, which has no action, says the admin decides', () => {
    expect(card.CARD_NEXT_STEPS.needs_review).toMatch(/^Pick the right one/);
    expect(lwc.SALESFORCE_NEXT_STEPS.needs_review).toMatch(/admin chooses/);
    expect(lwc.SALESFORCE_NEXT_STEPS.no_match).toMatch(/tell your admin/);
  });

  it('no seller-facing word or link names the admin page', () => {
    const files = [
      'connectors/hubspot/card/ui/card-text.ts',
      'connectors/hubspot/card/ui/ReportCard.tsx',
      'connectors/salesforce/record-page/lwc/reportScore/reportScoreView.js',
      'connectors/salesforce/record-page/lwc/reportScore/reportScore.html',
    ];
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      expect({ file, adminPage: /\(admin page\)|\/admin\b|adminUrl/.test(text) }).toEqual({
        file,
        adminPage: false,
      });
    }
  });
});
