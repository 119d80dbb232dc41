import { describe, expect, it } from 'vitest';
import { cardDataOf, parsePillars, safeReportUrl } from '../connectors/hubspot/card/card-view.js';
import { cardDataSchema } from '../connectors/hubspot/card/ui/card-data.js';
import { pillarsText } from '../src/pipeline/mapping.js';

/** The card's data from a HubSpot company as the connector wrote it. */

const record = (fields: Record<string, string | number | null>) => ({
  id: '501',
  name: 'Acme',
  domain: null,
  industry: null,
  country: null,
  city: null,
  fields,
});

describe('card data from the record', () => {
  it('reads back the pillars the connector writes', () => {
    const pillars = [
      { name: 'Governance', score: 80, weight: 0.4 },
      { name: 'Scope 3 emissions', score: 55.5, weight: 0.35 },
      { name: 'Disclosure', score: 68, weight: 0.25 },
    ];
    expect(parsePillars(pillarsText(pillars))).toEqual(pillars);
    expect(parsePillars('Governance 80; nonsense')).toEqual([
      { name: 'Governance', score: 80, weight: null },
    ]);
    expect(parsePillars(null)).toEqual([]);
  });

  it('keeps only http and https report addresses', () => {
    expect(safeReportUrl('https://reports.example.com/r/a')).toBe('https://reports.example.com/r/a');
    expect(safeReportUrl('http://reports.example.com/r/a')).toBe('http://reports.example.com/r/a');
    expect(safeReportUrl('javascript:alert(1)')).toBeNull();
    expect(safeReportUrl('data:text/html,hi')).toBeNull();
    expect(safeReportUrl('not a url')).toBeNull();
  });

  it('maps a linked record: score, verification, previous score and when it changed, alert, link source', () => {
    const data = cardDataOf({
      record: record({
        matchStatus: 'matched',
        slug: 'acme',
        score: '72',
        band: 'Strong',
        scoredAt: '2026-11-03T10:00:00.000Z',
        pillars: 'Governance 80 (40%)',
        verdict: 'confirmed',
        verifiedScore: 71,
        verifiedAt: '2026-11-05T09:00:00.000Z',
        reportUrl: 'javascript:alert(1)',
        scorePrevious: '61',
        alert: '[high] score_drop: Score fell',
        alertAt: '2026-11-04T12:00:00.000Z',
        linkSource: 'person',
        syncedAt: '2026-11-20T08:00:00.000Z',
      }),
      review: null,
      request: null,
    });
    expect(cardDataSchema.parse(data)).toEqual(data);
    expect(data).toMatchObject({
      companyId: '501',
      status: 'matched',
      report: { slug: 'acme', score: 72, band: 'Strong', url: null },
      verification: { verdict: 'confirmed', verifiedScore: 71 },
      previous: { score: 61, changedAt: '2026-11-03T10:00:00.000Z' },
      alert: { text: '[high] score_drop: Score fell', at: '2026-11-04T12:00:00.000Z' },
      linkSource: 'person',
    });
  });

  it('gives candidates only while the record waits for review, and an unknown status as never written', () => {
    const review = {
      recordId: '501',
      name: 'Acme',
      candidates: [
        { slug: 'acme-gmbh', name: 'Acme GmbH', geography: 'Germany', industry: 'Retail', score: 64 },
      ],
      at: '2026-11-01T00:00:00.000Z',
    };
    const waiting = cardDataOf({ record: record({ matchStatus: 'needs_review' }), review, request: null });
    expect(waiting.review?.candidates).toEqual([
      { slug: 'acme-gmbh', name: 'Acme GmbH', place: 'Germany', industry: 'Retail', score: 64 },
    ]);
    expect(
      cardDataOf({ record: record({ matchStatus: 'matched', slug: 'x' }), review, request: null }).review,
    ).toBeNull();
    const reasoned = cardDataOf({
      record: record({ matchStatus: 'needs_review' }),
      review: {
        ...review,
        candidates: [{ ...review.candidates[0]!, why: 'same name after transliteration to Latin letters' }],
      },
      request: null,
    });
    expect(reasoned.review?.candidates[0]).toMatchObject({
      why: 'same name after transliteration to Latin letters',
    });
    expect(cardDataSchema.parse(reasoned)).toEqual(reasoned);
    const unknown = cardDataOf({
      record: record({ matchStatus: 'something-else' }),
      review: null,
      request: null,
    });
    expect(unknown).toMatchObject({
      status: null,
      report: null,
      verification: null,
      previous: null,
      alert: null,
    });
  });
});
