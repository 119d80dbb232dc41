import { createHash } from 'node:crypto';
import { SALESFORCE_INDUSTRY_PICKLIST } from '../../connectors/salesforce/records/industry-picklist.js';
import type { OutsideSample, SampleRecord, SampleReport } from '../../src/matching/evaluate.js';
import { normalizeIndustry } from '../../src/matching/normalize.js';
import type { MatchCandidate, MatchCompany } from '../../src/matching/schemas.js';
import type { FixtureReport } from '../../src/sandbox/fixtures.js';
import { type IndexedReport, indexReport } from '../../src/sandbox/report-store.js';
import { checkQuery, searchReports } from '../../src/sandbox/search.js';
import { foldedWords, foldText } from '../../src/sandbox/text-folding.js';

/**
 * The outside sample's catalogue served by the sandbox's own search code, under several word splittings: the
 * interface does not say how the service splits words, so the matcher is measured under each.
 */

type Words = (text: string) => string[];

const INNER_MARKS = /(?<=[\p{L}\p{N}])['\u2019`´.&+-](?=[\p{L}\p{N}])/gu;

const joinAtMarks: Words = (text) =>
  foldText(text)
    .replace(INNER_MARKS, '')
    .match(/[\p{L}\p{N}]+/gu) ?? [];

export const TOKENISATIONS: ReadonlyArray<{ name: string; words: Words; anyWord?: boolean }> = [
  // The sandbox's own: every mark between letters is a word break, accents folded.
  { name: 'marks split words', words: foldedWords },
  // Apostrophes, dots, hyphens and ampersands inside a word join it ("O'Brien" is "obrien").
  {
    name: 'marks join words',
    words: joinAtMarks,
  },
  // Marks split, but accents count: "muller" does not find "Müller".
  {
    name: 'accents kept',
    words: (text) =>
      text
        .normalize('NFC')
        .toLowerCase()
        .match(/[\p{L}\p{N}]+/gu) ?? [],
  },
  // Marks join words, and a report matching any one query word is a hit (most words first): a common word
  // fills the results, as the issue saw a service do.
  { name: 'marks join words, any word matches', words: joinAtMarks, anyWord: true },
];

/** A sample report as the sandbox holds one: the sample has no scores, so every report gets the same. */
export function asFixture(report: SampleReport): FixtureReport {
  return {
    ...report,
    score: {
      overall: 50,
      band: 'n/a',
      pillars: [],
      strengths: [],
      risks: [],
      scored_at: '2026-01-01T00:00:00Z',
    },
    verification: null,
    report_url: `https://reports.invalid/${report.slug}`,
  };
}

export interface SampleSearch {
  search(q: string, limit: number): Promise<MatchCandidate[]>;
  /** Searches made so far. */
  calls: number;
}

/** Reports matching any query word, those matching most words first, the exact name before all. */
function anyWordSearch(entries: IndexedReport[], q: string, limit: number, words: Words): FixtureReport[] {
  const wanted = words(q);
  return entries
    .map((entry) => ({
      entry,
      hits: wanted.filter((w) => entry.searchWords.some((word) => word.startsWith(w))).length,
      exact: entry.nameWords.join(' ') === wanted.join(' '),
    }))
    .filter((m) => m.hits > 0)
    .sort(
      (a, b) =>
        Number(b.exact) - Number(a.exact) ||
        b.hits - a.hits ||
        a.entry.report.name.localeCompare(b.entry.report.name),
    )
    .slice(0, limit)
    .map((m) => m.entry.report);
}

/** A search over the sample's published reports; `q` is checked against the interface's rule first. */
export function sampleSearch(sample: OutsideSample, words: Words, anyWord = false): SampleSearch {
  const entries: IndexedReport[] = sample.reports
    .filter((report) => report.published)
    .map((report) => indexReport(asFixture(report), words));
  const state: SampleSearch = {
    calls: 0,
    async search(q, limit) {
      state.calls += 1;
      const checked = checkQuery(q);
      const results = anyWord
        ? anyWordSearch(entries, checked, limit, words)
        : searchReports(entries, { q: checked, limit }, words).results;
      return results.map((report) => ({
        slug: report.slug,
        name: report.name,
        industry: report.industry,
        geography: report.geography,
        stage: report.stage,
        // The sandbox's search answers with the whole report, its description included.
        description: report.description,
      }));
    },
  };
  return state;
}

export type CrmShape = 'HubSpot' | 'Salesforce';

/**
 * A sample record as the connector reads it from each CRM. A record's own industry (HubSpot's enumeration)
 * is kept for HubSpot and written as the Salesforce picklist value the industry table files under the same
 * sector. A record without one gets, on Salesforce, a picklist value at random (a hash of the record id, so
 * every run gives the same): CRM industries are often filled in carelessly, and the matcher must not be
 * misled by one.
 */
export function shapeRecord(record: SampleRecord, crm: CrmShape): MatchCompany {
  const industry = record.industry ?? null;
  if (crm === 'HubSpot') {
    return {
      name: record.name,
      domain: record.domain,
      country: record.country,
      city: record.city,
      industry,
    };
  }
  const pick = createHash('sha256').update(`industry:${record.id}`).digest().readUInt32BE(0);
  return {
    name: record.name,
    // Salesforce keeps a Website, usually as a URL.
    domain: record.domain === null ? null : `https://www.${record.domain}`,
    country: record.country,
    city: record.city,
    industry:
      industry === null
        ? (SALESFORCE_INDUSTRY_PICKLIST[pick % SALESFORCE_INDUSTRY_PICKLIST.length] ?? null)
        : salesforcePicklistValue(industry),
  };
}

/** The Salesforce picklist value sharing the most sectors with a HubSpot industry ("Other" when none does). */
export function salesforcePicklistValue(hubspotIndustry: string): string {
  const wanted = normalizeIndustry(hubspotIndustry);
  let best = 'Other';
  let bestShared = 0;
  for (const value of SALESFORCE_INDUSTRY_PICKLIST) {
    const sectors = normalizeIndustry(value);
    const shared = sectors.filter((sector) => wanted.includes(sector)).length;
    const exact = shared === wanted.length && shared === sectors.length;
    const score = shared + (exact ? 0.5 : 0);
    if (score > bestShared) {
      best = value;
      bestShared = score;
    }
  }
  return best;
}
