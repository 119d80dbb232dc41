import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_QUERY_LENGTH, nameToQuery } from '../src/report-query.js';

const SERVICE_RULE = /^[A-Za-z0-9 -]*$/;

describe('nameToQuery', () => {
  it('always produces a q the service accepts', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 400 }), (name) => {
        const q = nameToQuery(name);
        expect(q.length).toBeLessThanOrEqual(MAX_QUERY_LENGTH);
        expect(q).toMatch(SERVICE_RULE);
        expect(q).toBe(q.trim());
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps every word it can when cutting, and cuts at a word boundary', () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[a-z]{1,15}$/), { minLength: 1, maxLength: 40 }), (words) => {
        const name = words.join(' ');
        const q = nameToQuery(name);
        if (name.length <= MAX_QUERY_LENGTH) expect(q).toBe(name);
        else {
          expect(name.startsWith(`${q} `)).toBe(true);
          expect(q.length).toBeGreaterThan(MAX_QUERY_LENGTH - 16);
        }
      }),
    );
  });

  it.each([
    ['Société Générale S.A.', 'Societe Generale S A'],
    ['Müller & Söhne GmbH', 'Muller and Sohne GmbH'],
    ["O'Brien Holdings, Inc.", 'OBrien Holdings Inc'],
    ['Straße Werke', 'Strasse Werke'],
    ['  Coca-Cola   Co. ', 'Coca-Cola Co'],
    ['-- weird -- name --', 'weird name'],
    ['東京電力', ''],
    ['Ørsted A/S', 'Orsted A S'],
  ])('%s -> %s', (name, q) => {
    expect(nameToQuery(name)).toBe(q);
  });

  it('cuts a single over-long word hard', () => {
    expect(nameToQuery('x'.repeat(300))).toBe('x'.repeat(MAX_QUERY_LENGTH));
  });
});
