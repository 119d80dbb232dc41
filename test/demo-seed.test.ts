import { describe, expect, it } from 'vitest';
import { demoCompanies } from '../local/demo-seed.js';
import { loadFixtureReports } from '../src/sandbox/index.js';

/**
 * The demo's review queue has decisions worth making: namesakes of several names, each record with the
 * industry (and the country, when its namesakes share one) that tell the candidates apart for a person, and
 * one true tie that nothing on the record can decide. The outcomes themselves are checked by the backfill tests
 * (test/pipeline-backfill.test.ts, test/pipeline-salesforce.test.ts) against the real matcher.
 */

const fixtures = loadFixtureReports();
const seed = demoCompanies(fixtures, 300);
const review = seed.filter((c) => c.expected.status === 'needs_review');
const published = fixtures.filter((f) => f.published);
const namesakesOf = (name: string) => published.filter((f) => f.name.toLowerCase() === name.toLowerCase());

describe('the demo seed of 300 companies', () => {
  it('keeps the counts the demo prints: 30 for review among 300', () => {
    expect(seed.length).toBe(300);
    expect(review.length).toBe(30);
  });

  it('puts at least 10 distinct names in review, each with an industry and at least two namesakes', () => {
    const names = new Set(review.map((c) => c.name));
    expect(names.size).toBeGreaterThanOrEqual(10);
    for (const c of review) {
      expect(c.industry, c.name).toBeTruthy();
      expect(namesakesOf(c.name!).length, c.name).toBeGreaterThanOrEqual(2);
    }
    // The country is on the record whenever its namesakes share one (the matcher still leaves the choice).
    expect(review.filter((c) => c.country !== null).length).toBeGreaterThanOrEqual(20);
  });

  it('has candidates the record’s industry tells apart, and exactly one true tie', () => {
    const tied = review.filter((c) => {
      const group = namesakesOf(c.name!);
      return group.every(
        (f) =>
          f.industry === group[0]!.industry &&
          f.score.overall === group[0]!.score.overall &&
          f.geography.split(', ').pop() === c.country,
      );
    });
    expect(tied.length).toBe(1);
    const told = review.filter(
      (c) => !tied.includes(c) && namesakesOf(c.name!).filter((f) => f.industry === c.industry).length === 1,
    );
    expect(told.length).toBe(review.length - 1);
  });
});
