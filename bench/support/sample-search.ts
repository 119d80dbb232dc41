import { createHash } from 'node:crypto';
import type { OutsideSample, SampleRecord, SampleReport } from '../../src/matching/evaluate.js';
import { SALESFORCE_INDUSTRY_PICKLIST } from '../../src/matching/industries.js';
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

export const TOKENISATIONS: ReadonlyArray<{ name: string; words: Words }> = [
  // The sandbox's own: every mark between letters is a word break, accents folded.
  { name: 'marks split words', words: foldedWords },
  // Apostrophes, dots, hyphens and ampersands inside a word join it ("O'Brien" is "obrien").
  {
    name: 'marks join words',
    words: (text) =>
      foldText(text)
        .replace(INNER_MARKS, '')
        .match(/[\p{L}\p{N}]+/gu) ?? [],
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
];

function asFixture(report: SampleReport): FixtureReport {
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

/** A search over the sample's published reports; `q` is checked against the interface's rule first. */
export function sampleSearch(sample: OutsideSample, words: Words): SampleSearch {
  const entries: IndexedReport[] = sample.reports
    .filter((report) => report.published)
    .map((report) => indexReport(asFixture(report), words));
  const state: SampleSearch = {
    calls: 0,
    async search(q, limit) {
      state.calls += 1;
      const { results } = searchReports(entries, { q: checkQuery(q), limit }, words);
      return results.map((report) => ({
        slug: report.slug,
        name: report.name,
        industry: report.industry,
        geography: report.geography,
        stage: report.stage,
      }));
    },
  };
  return state;
}

export type CrmShape = 'HubSpot' | 'Salesforce';

/**
 * A sample record as the connector reads it from each CRM. Salesforce Accounts get an `Industry` picklist
 * value at random (a hash of the record id, so every run gives the same): CRM industries are often filled in
 * carelessly, and the matcher must not be misled by one.
 */
export function shapeRecord(record: SampleRecord, crm: CrmShape): MatchCompany {
  if (crm === 'HubSpot') {
    return {
      name: record.name,
      domain: record.domain,
      country: record.country,
      city: record.city,
      industry: null,
    };
  }
  const pick = createHash('sha256').update(`industry:${record.id}`).digest().readUInt32BE(0);
  return {
    name: record.name,
    // Salesforce keeps a Website, usually as a URL.
    domain: record.domain === null ? null : `https://www.${record.domain}`,
    country: record.country,
    city: record.city,
    industry: SALESFORCE_INDUSTRY_PICKLIST[pick % SALESFORCE_INDUSTRY_PICKLIST.length] ?? null,
  };
}
