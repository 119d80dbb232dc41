import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leastSeconds } from '../bench/support/backfill-report.js';
import {
  MAX_EXTRA_REPORTS,
  TooManyReportsError,
  withExtraReports,
} from '../bench/support/fixture-reports.js';
import { median, percentile } from '../bench/support/measure.js';
import { nameToQuery } from '../src/report-query.js';
import {
  createSandbox,
  type FixtureReport,
  type ListeningSandbox,
  loadFixtureReports,
  parseFixtureReports,
} from '../src/sandbox/index.js';

describe('bench order statistics', () => {
  it('takes the middle value, or the mean of the middle two', () => {
    expect(median([5, 1, 4, 2, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it('uses the nearest rank for percentiles', () => {
    const oneToTwenty = Array.from({ length: 20 }, (_, i) => 20 - i);
    expect(percentile(oneToTwenty, 95)).toBe(19);
    expect(percentile(oneToTwenty, 100)).toBe(20);
    expect(percentile(oneToTwenty, 1)).toBe(1);
    expect(percentile([], 99)).toBeNaN();
  });
});

describe('the least time a window limit allows', () => {
  it('admits one whole window at once, then one per window', () => {
    expect(leastSeconds(0, 3000, 60_000)).toBe(0);
    expect(leastSeconds(3000, 3000, 60_000)).toBe(0);
    expect(leastSeconds(3001, 3000, 60_000)).toBe(60);
    expect(leastSeconds(6607, 3000, 60_000)).toBe(120);
    expect(leastSeconds(2000, 1100, 10_000)).toBe(10);
  });
});

describe('generated bench reports', () => {
  const shipped = loadFixtureReports();
  const all = withExtraReports(shipped, 400);
  const generated = all.slice(shipped.length);

  it('are valid sandbox fixtures with distinct slugs, the same on every call', () => {
    expect(parseFixtureReports(all)).toHaveLength(shipped.length + 400);
    expect(withExtraReports(shipped, 400)).toEqual(all);
    expect(generated.filter((r) => !r.published)).toHaveLength(20);
  });

  it('refuses more than the word lists can name', () => {
    expect(() => withExtraReports(shipped, MAX_EXTRA_REPORTS + 1)).toThrow(TooManyReportsError);
  });

  describe('searched in the sandbox', () => {
    let listening: ListeningSandbox;
    beforeAll(async () => {
      listening = await createSandbox({ fixtures: all, rateLimitPerMinute: 100_000 }).listen(0);
    });
    afterAll(async () => {
      await listening?.close();
    });

    async function search(name: string): Promise<string[]> {
      const url = `${listening.url}/v1/search?${new URLSearchParams({ q: nameToQuery(name), limit: '50' })}`;
      const res = await fetch(url, { headers: { authorization: 'Bearer sk_sandbox_read' } });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { results: FixtureReport[] };
      return body.results.map((r) => r.slug);
    }

    it('a generated name finds its own report and no other', async () => {
      for (const report of generated.filter((r) => r.published).slice(0, 60)) {
        expect(await search(report.name)).toEqual([report.slug]);
      }
    });

    it('a shipped name finds no generated report, so the shipped expectations still hold', async () => {
      const generatedSlugs = new Set(generated.map((r) => r.slug));
      for (const report of shipped) {
        if (nameToQuery(report.name).trim() === '') continue;
        expect((await search(report.name)).filter((slug) => generatedSlugs.has(slug))).toEqual([]);
      }
    });
  });
});
