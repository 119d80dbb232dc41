import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SALESFORCE_INDUSTRY_PICKLIST } from '../connectors/salesforce/records/industry-picklist.js';
import { decideMatch } from '../src/matching/decide.js';
import { normalizeIndustry } from '../src/matching/normalize.js';
import { queryFormsFor } from '../src/matching/query.js';
import { findMatch, retrieveCandidates, type SearchFn } from '../src/matching/retrieve.js';
import type { MatchCandidate } from '../src/matching/schemas.js';
import { compareNames } from '../src/matching/similarity.js';

const SERVICE_Q = /^[A-Za-z0-9 -]{1,120}$/;

function report(slug: string, name: string, geography: string | null = null): MatchCandidate {
  return { slug, name, geography, industry: null, stage: null };
}

/** A search over `reports` with AND semantics on word prefixes, splitting words with `words`. */
function searchOver(
  reports: MatchCandidate[],
  words: (text: string) => string[],
): SearchFn & { sent: string[] } {
  const sent: string[] = [];
  const fn = async (q: string, limit: number) => {
    expect(q).toMatch(SERVICE_Q);
    sent.push(q);
    const wanted = words(q);
    return reports
      .filter((r) => wanted.every((w) => words(r.name).some((word) => word.startsWith(w))))
      .slice(0, limit);
  };
  return Object.assign(fn, { sent });
}

const splitting = (text: string) =>
  text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .match(/[a-z0-9]+/g) ?? [];
const joining = (text: string) => splitting(text.replace(/(?<=\p{L})['’.&-](?=\p{L})/gu, ''));

describe('queryFormsFor', () => {
  it.each([
    ["O'Varrick Foods", ['O Varrick Foods', 'OVarrick Foods', 'Varrick Foods']],
    ['Zentrell.io', ['Zentrell io', 'Zentrellio']],
    ['Harrow-Quist Labs GmbH', ['Harrow Quist Labs', 'HarrowQuist Labs', 'Harrow-Quist Labs']],
    ['Penn & Tollbar Cloud', ['Penn Tollbar Cloud']],
    ['Brüderwald Kessing AG', ['Bruderwald Kessing']],
  ])('%j is searched as %j (and more)', (name, expected) => {
    const forms = queryFormsFor(name);
    for (const q of expected) expect(forms).toContain(q);
    expect(forms[0]).toBe(expected[0]);
  });

  it('prefers a word written without accents as the last, broadest form', () => {
    expect(queryFormsFor('Brüderwald Kessing AG').at(-1)).toBe('Kessing');
  });

  it('is empty for a name with nothing searchable', () => {
    expect(queryFormsFor('')).toEqual([]);
    expect(queryFormsFor('株式会社')).toEqual([]);
  });

  it('always gives forms the service accepts, without repeats', () => {
    fc.assert(
      fc.property(
        fc
          .array(
            fc.oneof(fc.constantFrom("O'", 'D’', '.', '-', '&', ' ', 'é', 'GmbH', 'B.V.'), fc.string()),
            {
              maxLength: 10,
            },
          )
          .map((parts) => parts.join('')),
        (name) => {
          const forms = queryFormsFor(name);
          expect(new Set(forms).size).toBe(forms.length);
          for (const q of forms) expect(q).toMatch(SERVICE_Q);
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('retrieveCandidates', () => {
  const catalogue = [
    report('varrick', "O'Varrick Foods", 'Canada'),
    report('other-foods', 'Tamblin Foods', 'Canada'),
    report('zentrell', 'Zentrell.io', 'Germany'),
  ];

  it.each([
    ['a search that splits words at marks', splitting],
    ['a search that joins words at marks', joining],
  ])('finds an apostrophe or dot name with %s', async (_what, words) => {
    for (const [name, slug] of [
      ["O'Varrick Foods", 'varrick'],
      ['Zentrell.io', 'zentrell'],
    ] as const) {
      const search = searchOver(catalogue, words);
      const found = await retrieveCandidates({ name }, search, 10);
      expect(found.candidates.map((c) => c.slug)).toContain(slug);
      expect(found.queries).toEqual(search.sent);
      expect(found.queries.length).toBeLessThanOrEqual(2);
    }
  });

  it('tries the next form while results hold only other companies, and merges them', async () => {
    // A search that answers any query with the common word's reports first, as a loose service might.
    const loose: SearchFn = async (q) =>
      q === 'O Varrick Foods' ? [catalogue[1]!] : q === 'OVarrick Foods' ? [catalogue[0]!] : [];
    const found = await retrieveCandidates({ name: "O'Varrick Foods" }, loose, 10);
    expect(found.queries).toEqual(['O Varrick Foods', 'OVarrick Foods']);
    expect(found.candidates.map((c) => c.slug).sort()).toEqual(['other-foods', 'varrick']);
  });

  it('stops at the first form that finds the name', async () => {
    const search = searchOver(catalogue, splitting);
    await retrieveCandidates({ name: "O'Varrick Foods" }, search, 10);
    expect(search.sent).toEqual(['O Varrick Foods']);
  });

  it('links a coined one-word name that the search shows to be distinctive, and not a shared one', async () => {
    const alone = await findMatch({ name: 'Quorvane' }, searchOver([report('q', 'Quorvane')], splitting), 10);
    expect(alone.decision).toMatchObject({ status: 'matched', slug: 'q' });
    const shared = await findMatch(
      { name: 'Quorvane' },
      searchOver([report('q', 'Quorvane'), report('q2', 'Quorvane Biosystems')], splitting),
      10,
    );
    expect(shared.decision.status).toBe('needs_review');
    // A full page of results says nothing about what else the word would find.
    const full = await findMatch({ name: 'Quorvane' }, searchOver([report('q', 'Quorvane')], splitting), 1);
    expect(full.decision.status).toBe('needs_review');
  });
});

describe('distinctiveness and similarity', () => {
  it('keeps a one-word name weak without search evidence, and a common word weak with it', () => {
    expect(decideMatch({ name: 'Quorvane' }, [report('q', 'Quorvane')]).status).toBe('needs_review');
    expect(decideMatch({ name: 'Quorvane' }, [report('q', 'Quorvane')], { complete: true }).status).toBe(
      'matched',
    );
    expect(decideMatch({ name: 'Global' }, [report('g', 'Global')], { complete: true }).status).toBe(
      'needs_review',
    );
  });

  it("requires the record's distinctive words in a similar candidate", () => {
    expect(compareNames('vell quorrin payments', 'vell health media')).toBeNull();
    expect(compareNames('vell quorrin', 'vell quorrin payments group')).toBe('extends');
    const decision = decideMatch({ name: 'Vell Quorrin Payments Inc.' }, [report('v', 'Vell Health Media')]);
    expect(decision.status).toBe('no_match');
  });
});

describe("Salesforce's Industry picklist", () => {
  it('maps every standard value but Other to a sector', () => {
    for (const value of SALESFORCE_INDUSTRY_PICKLIST) {
      if (value === 'Other') expect(normalizeIndustry(value)).toEqual([]);
      else expect(normalizeIndustry(value), value).not.toEqual([]);
    }
  });
});
