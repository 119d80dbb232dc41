import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LEGAL_SUFFIXES } from '../src/matching/legal-forms.js';
import { searchQueryFor } from '../src/matching/query.js';

const SERVICE_Q = /^[A-Za-z0-9 -]{0,120}$/;

describe('searchQueryFor', () => {
  it.each([
    ['Nordlicht Analytics GmbH', 'Nordlicht Analytics'],
    ['Müller & Söhne GmbH & Co. KG', 'Muller and Sohne'],
    ["O'Malley Cloud Services Limited", 'OMalley Cloud Services'],
    ['Ørsted A/S', 'Orsted'],
    ['The Coca-Cola Company', 'Coca Cola'],
    ['PT Nusantara Logistik Tbk', 'Nusantara Logistik'],
    ['Sakura Tech 株式会社', 'Sakura Tech'],
    ['ООО Romashka', 'Romashka'],
    ['Halvorsen Intl AS', 'Halvorsen Intl'],
    ['Inc.', 'Inc'],
    ['7-Eleven, Inc.', '7 Eleven'],
  ])('%j -> %j', (name, q) => {
    expect(searchQueryFor({ name })).toBe(q);
  });

  it.each([
    ['an empty name', ''],
    ['a blank name', '   '],
    ['punctuation only', '?!-'],
    ['a Japanese name', 'サクラテック株式会社'],
    ['a Cyrillic name', 'ООО Ромашка'],
    ['a Japanese name with a Latin legal form', '株式会社トヨタ Co., Ltd.'],
    ['emoji', '🚀'],
  ])('is null for %s', (_what, name) => {
    expect(searchQueryFor({ name })).toBeNull();
  });

  it('is null without a name', () => {
    expect(searchQueryFor({ name: null })).toBeNull();
    expect(searchQueryFor({})).toBeNull();
  });

  it('always passes the service rule and is never empty', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 300 }),
          fc
            .array(fc.oneof(fc.constantFrom(...LEGAL_SUFFIXES, '&', "'", '-', '株式会社'), fc.string()), {
              maxLength: 12,
            })
            .map((parts) => parts.join(' ')),
        ),
        (name) => {
          const q = searchQueryFor({ name });
          if (q !== null) {
            expect(q).toMatch(SERVICE_Q);
            expect(q.trim()).not.toBe('');
          }
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('searches something whenever the name itself has an ASCII letter or digit', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[A-Za-z0-9]{1,20}$/),
        fc.constantFrom('', ' Inc.', ' GmbH', ' 株式会社'),
        (word, form) => {
          expect(searchQueryFor({ name: `${word}${form}` })).not.toBeNull();
        },
      ),
    );
  });
});
