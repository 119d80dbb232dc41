import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CrmShape, sampleSearch, shapeRecord, TOKENISATIONS } from '../bench/support/sample-search.js';
import { syncSample } from '../bench/support/sample-sync.js';
import {
  type OutsideSample,
  outsideSampleSchema,
  type SampleKindQuality,
  type SampleOutcome,
  sampleRecall,
  scoreSample,
} from '../src/matching/evaluate.js';
import { normalizeCompanyName } from '../src/matching/normalize.js';
import { findMatch } from '../src/matching/retrieve.js';

/**
 * Issue 12's bar, measured on the outside sample (../shared/match-sample, read here, never copied): no wrong
 * link, at least 95% of the matchable records right, every namesake pair in review with both candidates, no
 * `no_match` beside a same-named report. In process under every word splitting, and through a full sync of
 * each CRM against the sandbox.
 */

const SAMPLE = join(import.meta.dirname, '..', '..', 'shared', 'match-sample', 'sample.json');
const sample: OutsideSample | null = existsSync(SAMPLE)
  ? outsideSampleSchema.parse(JSON.parse(readFileSync(SAMPLE, 'utf8')))
  : null;
const CRMS: CrmShape[] = ['HubSpot', 'Salesforce'];

function meetsTheBar(all: SampleKindQuality): void {
  expect(all.wrongLinks).toBe(0);
  expect(sampleRecall(all)).toBeGreaterThanOrEqual(0.95);
  expect(all.namesakesComplete).toBe(all.namesakes);
  expect(all.noMatchBesideSameName).toBe(0);
}

describe('the outside sample in CI', () => {
  // Locally the sample is optional and its tests skip without it; in CI (CI=true) a missing sample would let
  // them skip unseen and the bar go unmeasured, so its absence fails here.
  it('is present at ../shared/match-sample/sample.json when CI=true', () => {
    if (process.env.CI !== 'true') return;
    expect(
      sample,
      `CI=true but the outside sample is missing at ${SAMPLE}: check out the shared folder beside the clone`,
    ).not.toBeNull();
  });
});

describe.skipIf(sample === null)('the outside sample', () => {
  const data = sample as OutsideSample;

  it('holds 420 labelled records with namesakes among them', () => {
    expect(data.records.length).toBeGreaterThanOrEqual(400);
    expect(Object.values(data.expected).filter((e) => e.status === 'needs_review').length).toBeGreaterThan(
      20,
    );
  });

  for (const { name, words, anyWord } of TOKENISATIONS) {
    it.each(CRMS)(`meets the bar for %s records when the search's words are "${name}"`, async (crm) => {
      const service = sampleSearch(data, words, anyWord);
      const outcomes: SampleOutcome[] = [];
      for (const record of data.records) {
        const before = service.calls;
        const { decision } = await findMatch(shapeRecord(record, crm), service.search, 10);
        outcomes.push({ id: record.id, decision, searches: service.calls - before });
      }
      const { all } = scoreSample(data, outcomes, normalizeCompanyName);
      meetsTheBar(all);
      // The extra query forms stay cheap.
      expect(all.searches / all.records).toBeLessThan(2);
    });
  }

  it.each(CRMS)(
    'meets the bar through a full sync of %s against the sandbox',
    { timeout: 300_000 },
    async (crm) => {
      const sync = await syncSample(data, crm);
      expect(sync.runState).toBe('done');
      meetsTheBar(sync.quality.all);
      expect(sync.searches / data.records.length).toBeLessThan(2);
    },
  );
});

/**
 * The messy sample (../shared/match-sample-messy, read here, never copied): records written the way people
 * keep them. Through the sandbox's own search and through a full sync of each CRM: no wrong link, at least
 * 95% of the records with a report right, every umlaut, Cyrillic or Greek and former-name record linked or in
 * review with its report, junk names left alone at no search, and at most 1.3 searches a record.
 */
const MESSY = join(import.meta.dirname, '..', '..', 'shared', 'match-sample-messy', 'sample.json');
const messy: OutsideSample | null = existsSync(MESSY)
  ? outsideSampleSchema.parse(JSON.parse(readFileSync(MESSY, 'utf8')))
  : null;
const MUST_BE_RIGHT = ['matchable/german_translit', 'matchable/other_script', 'matchable/former_name'];

describe.skipIf(messy === null)('the messy sample', () => {
  const data = messy as OutsideSample;
  const sandboxWords = TOKENISATIONS[0]!;

  it.each(CRMS)('meets the bar for %s records through the sandbox search', async (crm) => {
    const service = sampleSearch(data, sandboxWords.words);
    const outcomes: SampleOutcome[] = [];
    for (const record of data.records) {
      const before = service.calls;
      const { decision } = await findMatch(shapeRecord(record, crm), service.search, 10);
      outcomes.push({ id: record.id, decision, searches: service.calls - before });
    }
    const { all, byKind } = scoreSample(data, outcomes, normalizeCompanyName);
    expect(all.wrongLinks).toBe(0);
    expect(sampleRecall(all)).toBeGreaterThanOrEqual(0.95);
    expect(all.namesakesComplete).toBe(all.namesakes);
    for (const kind of MUST_BE_RIGHT) {
      const row = byKind.get(kind);
      expect(row?.right, kind).toBe(row?.records);
    }
    const junk = byKind.get('no_report/junk_name');
    expect(junk?.right).toBe(junk?.records);
    expect(junk?.linked).toBe(0);
    expect(all.searches / all.records).toBeLessThanOrEqual(1.3);
  });

  it.each(CRMS)('meets the bar through a full sync of %s', { timeout: 300_000 }, async (crm) => {
    const sync = await syncSample(data, crm);
    expect(sync.runState).toBe('done');
    expect(sync.quality.all.wrongLinks).toBe(0);
    expect(sampleRecall(sync.quality.all)).toBeGreaterThanOrEqual(0.95);
    for (const kind of MUST_BE_RIGHT) {
      const row = sync.quality.byKind.get(kind);
      expect(row?.right, kind).toBe(row?.records);
    }
    expect(sync.searches / data.records.length).toBeLessThanOrEqual(1.3);
  });
});
