import { describe, expect, it } from 'vitest';
import { SALESFORCE_LIMITS } from '../connectors/salesforce/provider.js';
import {
  changedValues,
  clearedValues,
  pillarsText,
  sameValue,
  valuesForReport,
} from '../src/pipeline/mapping.js';
import { reportSchema } from '../src/reports/schemas.js';

/** The grain values compare at: Salesforce's (6 decimals, whole seconds). */
const GRAIN = SALESFORCE_LIMITS.valueGrain;

const base = reportSchema.parse({
  slug: 'acme',
  name: 'Acme',
  industry: 'Robotics',
  stage: 'Seed',
  geography: 'Berlin, Germany',
  score: {
    overall: 72.123456789,
    band: 'good',
    pillars: [
      { name: 'Team', score: 80, weight: 0.35 },
      { name: 'Market', score: 70.5, weight: 0.65 },
    ],
    scored_at: '2026-10-01T12:00:00Z',
  },
  verification: { verified_score: 71, verdict: 'confirmed', signed_at: '2026-10-02T08:30:00+02:00' },
  report_url: 'https://reports.test/r/acme',
});

describe('valuesForReport', () => {
  it('maps every field, numbers as received and instants as ISO', () => {
    expect(valuesForReport(base)).toEqual({
      score: 72.123456789,
      band: 'good',
      scoredAt: '2026-10-01T12:00:00.000Z',
      pillars: 'Team 80 (35%); Market 70.5 (65%)',
      verifiedScore: 71,
      verdict: 'confirmed',
      verifiedAt: '2026-10-02T06:30:00.000Z',
      reportUrl: 'https://reports.test/r/acme',
      matchStatus: 'matched',
    });
  });

  it('empties verification fields when the report has none', () => {
    const v = valuesForReport({ ...base, verification: null });
    expect([v.verifiedScore, v.verdict, v.verifiedAt]).toEqual([null, null, null]);
    const w = valuesForReport({ ...base, verification: undefined });
    expect([w.verifiedScore, w.verdict, w.verifiedAt]).toEqual([null, null, null]);
  });

  it('writes no pillar text for an empty list', () => {
    expect(pillarsText([])).toBeNull();
    expect(pillarsText([{ name: 'X', score: 1.5, weight: 0.123 }])).toBe('X 1.5 (12.3%)');
  });
});

describe('clearedValues', () => {
  it('empties every report field, keeps the link out, and sets the status', () => {
    const v = clearedValues('not_published');
    expect(v.matchStatus).toBe('not_published');
    expect('slug' in v).toBe(false);
    expect(v.score).toBeNull();
    expect(v.reportUrl).toBeNull();
  });
});

describe('changedValues', () => {
  it('is empty when the CRM already holds the same values in its own formats', () => {
    const current = {
      score: 72.123457, // Salesforce keeps 6 decimals
      band: 'good',
      scoredAt: '2026-10-01T12:00:00Z',
      pillars: 'Team 80 (35%); Market 70.5 (65%)',
      verifiedScore: 71,
      verdict: 'confirmed',
      verifiedAt: '2026-10-02T06:30:00.000Z',
      reportUrl: 'https://reports.test/r/acme',
      matchStatus: 'matched',
      syncedAt: '2020-01-01T00:00:00Z',
    };
    expect(changedValues(current, valuesForReport(base), GRAIN)).toEqual({});
  });

  it('names exactly the fields that differ', () => {
    const current = { ...valuesForReport(base), score: 70 };
    expect(changedValues(current, valuesForReport(base), GRAIN)).toEqual({ score: 72.123456789 });
  });

  it('treats missing and empty as the same empty value', () => {
    expect(sameValue('verdict', undefined, null, GRAIN)).toBe(true);
    expect(sameValue('verdict', '', null, GRAIN)).toBe(true);
    expect(sameValue('verdict', 'x', null, GRAIN)).toBe(false);
    expect(sameValue('score', null, 0, GRAIN)).toBe(false);
  });

  it('compares instants to the second, as Salesforce stores DateTime', () => {
    expect(sameValue('scoredAt', '2026-10-01T12:00:00.000Z', '2026-10-01T12:00:00.734Z', GRAIN)).toBe(true);
    expect(sameValue('scoredAt', '2026-10-01T12:00:00.000Z', '2026-10-01T12:00:01.000Z', GRAIN)).toBe(false);
    expect(sameValue('scoredAt', 'not a time', 'not a time', GRAIN)).toBe(false);
  });
});
