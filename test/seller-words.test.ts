import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as card from '../connectors/hubspot/card/ui/card-text.js';
import * as words from '../connectors/hubspot/card/ui/seller-words.js';
import { PLACEHOLDER_APP_URL, salesforceProjectFiles } from '../connectors/salesforce/manifest/manifest.js';
// @ts-expect-error: the Salesforce component's view is plain JavaScript without declarations.
import * as view from '../connectors/salesforce/record-page/lwc/reportScore/reportScoreView.js';
import {
  SELLER_WORDS_MODULE,
  SELLER_WORDS_SOURCE,
} from '../connectors/salesforce/record-page/seller-words-module.js';
// @ts-expect-error: the generated LWC module is plain JavaScript without declarations.
import * as lwc from '../manifests/salesforce/unpackaged/main/default/lwc/sellerWords/sellerWords.js';

/**
 * One set of seller-facing words: the HubSpot card's seller-words.ts, which the generator writes into the SFDX
 * project as the LWC module `c/sellerWords`. These checks hold that the committed module is what the generator
 * makes from it and says the same, that the reportScore component keeps no copy of its own, and that no word
 * or link sends a seller to the connector's admin page.
 */

const ROOT = join(import.meta.dirname, '..');
const MODULE = `unpackaged/main/default/lwc/${SELLER_WORDS_MODULE.name}/${SELLER_WORDS_MODULE.name}.js`;
const VIEW = 'connectors/salesforce/record-page/lwc/reportScore/reportScoreView.js';
const TEMPLATE = 'connectors/salesforce/record-page/lwc/reportScore/reportScore.html';

const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** Every sentence of the shared words: the constants' strings, and the fixed parts of the functions' lines. */
function sentences(): string[] {
  const out: string[] = [];
  const collect = (value: unknown): void => {
    if (typeof value === 'string') out.push(value);
    else if (value && typeof value === 'object') for (const v of Object.values(value)) collect(v);
  };
  for (const value of Object.values(words)) if (typeof value !== 'function') collect(value);
  const gap = '\u0000';
  const lines = [
    words.scoredSentence(gap),
    words.verificationSentence(gap, gap, gap),
    words.previousSentence(1, 2, gap, gap),
    words.alertSentence(gap, gap),
  ];
  for (const line of lines) out.push(...line.split(gap).map((part) => part.trim()));
  return out.filter((s) => s.length >= 8);
}

describe('seller-facing words', () => {
  it('the Salesforce module c/sellerWords is what the generator writes from the card’s seller-words.ts', () => {
    const generated = salesforceProjectFiles({ appUrl: PLACEHOLDER_APP_URL })[MODULE];
    expect(
      read(`manifests/salesforce/${MODULE}`),
      `manifests/salesforce/${MODULE} differs from ${SELLER_WORDS_SOURCE}: run npm run manifests -- --app-url ${PLACEHOLDER_APP_URL}`,
    ).toBe(generated);
    const module: Record<string, unknown> = { ...lwc };
    // The card reads them through card-text.ts, which re-exports them.
    const cardText: Record<string, unknown> = { ...card };
    expect(Object.keys(module).sort()).toEqual(Object.keys(words).sort());
    for (const [name, value] of Object.entries(words)) {
      if (typeof value !== 'function') expect(module[name], name).toEqual(value);
      expect(cardText[name], name).toBe(value);
    }
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

  it('the reportScore component imports the words from c/sellerWords and holds no copy of them', () => {
    const source = read(VIEW);
    const imported = /import \{([^}]*)\} from 'c\/sellerWords';/.exec(source)?.[1];
    expect(imported, `${VIEW} imports c/sellerWords`).toBeDefined();
    const names = imported!
      .split(',')
      .map((n) => n.trim())
      .filter(Boolean);
    expect(
      names.every((n) => n in words),
      names.join(', '),
    ).toBe(true);
    for (const name of Object.keys(words)) {
      expect({ name, defined: new RegExp(`(const|function) ${name}\\b`).test(source) }).toEqual({
        name,
        defined: false,
      });
    }
    const shown = `${source}\n${read(TEMPLATE)}`;
    const found = sentences().filter((sentence) => shown.includes(sentence));
    expect(sentences().length).toBeGreaterThan(20);
    expect(found).toEqual([]);
  });

  it('the card acts for its signed user; the Salesforce component, which has no action, says the admin decides', () => {
    expect(card.CARD_NEXT_STEPS.needs_review).toMatch(/^Pick the right one/);
    expect(view.SALESFORCE_NEXT_STEPS.needs_review).toMatch(/admin chooses/);
    expect(view.SALESFORCE_NEXT_STEPS.no_match).toMatch(/tell your admin/);
  });

  it('no seller-facing word or link names the admin page', () => {
    const files = [
      'connectors/hubspot/card/ui/card-text.ts',
      SELLER_WORDS_SOURCE,
      'connectors/hubspot/card/ui/ReportCard.tsx',
      VIEW,
      TEMPLATE,
      `manifests/salesforce/${MODULE}`,
    ];
    for (const file of files) {
      expect({ file, adminPage: /\(admin page\)|\/admin\b|adminUrl/.test(read(file)) }).toEqual({
        file,
        adminPage: false,
      });
    }
  });
});
