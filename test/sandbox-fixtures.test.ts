import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { reportSchema } from '../src/reports/schemas.js';
import { loadFixtureReports } from '../src/sandbox/fixtures.js';

/** The shipped fixture file: valid, and holding every awkward case the connector must meet. */

const raw = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'reports.json'), 'utf8'));
const reports = loadFixtureReports();
const published = reports.filter((r) => r.published);
const plain = (text: string) =>
  text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();

describe('fixtures/reports.json', () => {
  it('loads through the sandbox schema from the default path', () => {
    expect(reports.length).toBe(raw.reports.length);
  });

  it('holds at least 220 organisations and more than 50 published reports, with unique slugs', () => {
    expect(reports.length).toBeGreaterThanOrEqual(220);
    expect(published.length).toBeGreaterThan(50);
    expect(new Set(reports.map((r) => r.slug)).size).toBe(reports.length);
  });

  it('every report, without its internal flag, is a valid Report for the connector schema', () => {
    for (const report of raw.reports) {
      const { published: _flag, ...rest } = report;
      const parsed = reportSchema.safeParse(rest);
      expect(parsed.success, report.slug).toBe(true);
    }
  });

  it('has pillar weights summing to 1 on every report', () => {
    for (const report of reports) {
      const sum = report.score.pillars.reduce((total, p) => total + p.weight, 0);
      expect(Math.abs(sum - 1), report.slug).toBeLessThan(1e-9);
    }
  });

  it('has verification absent, null and present', () => {
    expect(raw.reports.some((r: object) => !('verification' in r))).toBe(true);
    expect(reports.some((r) => r.verification === null)).toBe(true);
    expect(reports.some((r) => r.verification && typeof r.verification.verified_score === 'number')).toBe(
      true,
    );
  });

  it('has unusual bands: "n/a", "Exceptional+", empty, and case variants of one band', () => {
    const bands = new Set(reports.map((r) => r.score.band));
    for (const band of ['n/a', 'Exceptional+', '']) expect(bands, JSON.stringify(band)).toContain(band);
    const byLower = new Map<string, Set<string>>();
    for (const band of bands)
      byLower.set(band.toLowerCase(), (byLower.get(band.toLowerCase()) ?? new Set()).add(band));
    expect([...byLower.values()].some((variants) => variants.size >= 3)).toBe(true);
  });

  it('has names with punctuation, accents and non-Latin scripts', () => {
    const names = reports.map((r) => r.name);
    for (const mark of ['&', ',', "'", '!', '(', '/', '#', '%', '@', '"', '+', '.']) {
      expect(
        names.some((n) => n.includes(mark)),
        mark,
      ).toBe(true);
    }
    for (const letter of ['é', 'ü', 'Ñ', 'ß', 'Ł', 'Ø', 'Å']) {
      expect(
        names.some((n) => n.includes(letter)),
        letter,
      ).toBe(true);
    }
    for (const script of [
      /\p{Script=Han}/u,
      /\p{Script=Cyrillic}/u,
      /\p{Script=Arabic}/u,
      /\p{Script=Greek}/u,
      /\p{Script=Hangul}/u,
    ]) {
      expect(
        names.some((n) => script.test(n)),
        String(script),
      ).toBe(true);
    }
  });

  it('has the common legal suffixes', () => {
    const suffixes = [
      'Inc',
      'Inc.',
      'Ltd',
      'GmbH',
      'LLC',
      'S.A.',
      'AG',
      'plc',
      'Pty Ltd',
      'SAS',
      'BV',
      'Oy',
      'AB',
    ];
    for (const suffix of suffixes) {
      expect(
        reports.some((r) => r.name.endsWith(` ${suffix}`)),
        suffix,
      ).toBe(true);
    }
  });

  it('has near-duplicate names in different geographies with different industries', () => {
    const byName = new Map<string, { geography: string; industry: string }[]>();
    for (const r of published) {
      const key = plain(r.name);
      byName.set(key, [...(byName.get(key) ?? []), { geography: r.geography, industry: r.industry }]);
    }
    const duplicated = [...byName.values()].filter(
      (entries) =>
        new Set(entries.map((e) => e.geography)).size > 1 && new Set(entries.map((e) => e.industry)).size > 1,
    );
    expect(duplicated.length).toBeGreaterThanOrEqual(1);
    const acme = published.filter((r) => r.name === 'Acme Robotics');
    expect(acme.map((r) => r.geography.split(', ').pop()).sort()).toEqual(['Germany', 'United States']);
  });

  it('has unpublished reports, several industries and stages, and decimal scores', () => {
    expect(reports.filter((r) => !r.published).length).toBeGreaterThanOrEqual(5);
    expect(new Set(reports.map((r) => r.industry)).size).toBeGreaterThanOrEqual(8);
    expect(new Set(reports.map((r) => r.stage)).size).toBeGreaterThanOrEqual(5);
    expect(reports.filter((r) => !Number.isInteger(r.score.overall)).length).toBeGreaterThan(100);
    expect(reports.some((r) => /\.\d{2,}$/.test(String(r.score.overall)))).toBe(true);
  });

  it('has a name longer than the 120 characters q allows', () => {
    expect(reports.some((r) => r.name.length > 120)).toBe(true);
  });
});
