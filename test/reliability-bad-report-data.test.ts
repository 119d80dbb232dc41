import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoCompanies, type SeedCompanyInput } from '../local/demo-seed.js';
import type { LocalSystem } from '../local/system.js';
import { loadFixtureReports } from '../src/sandbox/index.js';
import type { RunSummary } from '../src/storage/runs.js';
import { staleRecords } from './support/end-state.js';
import { wrongRecords } from './support/expectations.js';
import { startTestSystem, stopTestSystem } from './support/local-system.js';
import { measured } from './support/measured.js';
import { ReportProxy, reportRead } from './support/report-proxy.js';
import { runEnded } from './support/system-state.js';

/**
 * Reports outside the shapes the seed knows, served through the real client over HTTP (a proxy in front of
 * the sandbox rewrites the sandbox's answer for some slugs): strings where numbers belong, unknown nested
 * fields, empty strings, very long text, non-Latin scripts, extreme numbers. Each such record sits among
 * ordinary ones in the same batches; each either gets exactly the values served or a clear `error` status with
 * the reason in the run's errors, and the rest of its batch is written as usual.
 */

const proxy = new ReportProxy();
let system: LocalSystem;
let run: RunSummary;

type Json = Record<string, unknown>;
const score = (r: Json) => r.score as Json;
const verification = (r: Json) => r.verification as Json;

const LONG_PILLARS = Array.from({ length: 30 }, (_, i) => ({
  name: `${'Pillar '.repeat(28)}${i}`,
  score: i + 0.5,
  weight: 1 / 30,
}));

interface OddShape {
  name: string;
  rewrite: (report: Json) => unknown;
  outcome: 'error' | 'matched';
  /** For matched shapes: the CRM values to expect besides the status. */
  expect?: Record<string, string | undefined>;
}

const SHAPES: OddShape[] = [
  {
    name: 'overall score as a string',
    outcome: 'error',
    rewrite: (r) => ({ ...r, score: { ...score(r), overall: '81.5' } }),
  },
  { name: 'the whole score as a string', outcome: 'error', rewrite: (r) => ({ ...r, score: '81.5' }) },
  {
    name: 'a pillar weight as a string',
    outcome: 'error',
    rewrite: (r) => ({ ...r, score: { ...score(r), pillars: [{ name: 'Team', score: 80, weight: '0.4' }] } }),
  },
  {
    name: 'scored_at that is not a date',
    outcome: 'error',
    rewrite: (r) => ({ ...r, score: { ...score(r), scored_at: 'yesterday' } }),
  },
  { name: 'an empty report_url', outcome: 'error', rewrite: (r) => ({ ...r, report_url: '' }) },
  { name: 'a list instead of a report', outcome: 'error', rewrite: (r) => [r] },
  { name: 'verification without its fields', outcome: 'error', rewrite: (r) => ({ ...r, verification: {} }) },
  {
    name: 'unknown nested fields',
    outcome: 'matched',
    rewrite: (r) => ({
      ...r,
      provenance: { source: { system: 'x', batch: [1, { deep: null }] } },
      score: { ...score(r), extra: { nested: { list: [1, 2, 3] } }, strengths: [{ what: 'anything' }] },
      ...(r.verification ? { verification: { ...verification(r), auditor: { name: 'A', ids: [1] } } } : {}),
    }),
  },
  {
    name: 'empty strings',
    outcome: 'matched',
    rewrite: (r) => ({
      ...r,
      name: '',
      industry: '',
      score: { ...score(r), band: '' },
      verification: { verified_score: 50, verdict: '', signed_at: '2026-01-01T00:00:00Z' },
    }),
    expect: { report_band: undefined, report_verdict: undefined, report_verified_score: '50' },
  },
  {
    name: 'very long name and pillars',
    outcome: 'matched',
    rewrite: (r) => ({ ...r, name: 'N'.repeat(100_000), score: { ...score(r), pillars: LONG_PILLARS } }),
  },
  {
    name: 'non-Latin scripts',
    outcome: 'matched',
    rewrite: (r) => ({
      ...r,
      name: 'Ωμέγα Ενέργεια',
      score: {
        ...score(r),
        band: '優秀',
        pillars: [
          { name: 'فريق', score: 70, weight: 0.5 },
          { name: 'Рынок', score: 60.25, weight: 0.25 },
          { name: 'उत्पाद', score: 55, weight: 0.25 },
        ],
      },
      verification: { verified_score: 71, verdict: 'Подтверждено ✓', signed_at: '2026-02-03T04:05:06Z' },
    }),
    expect: {
      report_band: '優秀',
      report_verdict: 'Подтверждено ✓',
      report_pillars: 'فريق 70 (50%); Рынок 60.25 (25%); उत्पाद 55 (25%)',
    },
  },
  {
    name: 'no verification (null)',
    outcome: 'matched',
    rewrite: (r) => ({ ...r, verification: null }),
    expect: { report_verified_score: undefined, report_verdict: undefined, report_verified_at: undefined },
  },
  {
    name: 'extreme numbers',
    outcome: 'matched',
    rewrite: (r) => ({ ...r, score: { ...score(r), overall: 1e21, pillars: [] }, verification: null }),
    expect: { report_pillars: undefined },
  },
  {
    name: 'markup in text fields',
    outcome: 'matched',
    rewrite: (r) => ({ ...r, score: { ...score(r), band: '<script>alert(1)</script>' } }),
    expect: { report_band: '<script>alert(1)</script>' },
  },
];

/** Seed: ordinary demo companies, with one company per odd shape slipped in every 7th place. */
function seedWithOddOnes(): { seed: SeedCompanyInput[]; odd: Map<string, OddShape> } {
  const fixtures = loadFixtureReports();
  const base = demoCompanies(fixtures, 200);
  const used = new Set(base.flatMap((c) => ('slug' in c.expected ? [c.expected.slug] : [])));
  const free = fixtures.filter((f) => f.published && !used.has(f.slug));
  if (free.length < SHAPES.length) throw new Error('not enough unused published fixtures for the odd shapes');
  const odd = new Map<string, OddShape>();
  const seed = [...base];
  SHAPES.forEach((shape, i) => {
    const slug = free[i]!.slug;
    odd.set(slug, shape);
    seed.splice(3 + i * 7, 0, {
      name: `Odd shape ${i}`,
      domain: null,
      country: null,
      city: null,
      industry: null,
      slug,
      expected: { status: 'matched', slug },
    });
  });
  return { seed, odd };
}

const { seed, odd } = seedWithOddOnes();

beforeAll(async () => {
  for (const [slug, shape] of odd)
    proxy.rules.push({ matches: reportRead(slug), rewrite: (body) => shape.rewrite(body as Json) });
  // Search hits are whole reports in the sandbox, and count as reads of them: they get the same shapes.
  proxy.rules.push({
    matches: (r) => r.path.includes('/v1/search'),
    rewrite: (body) => {
      const b = body as { results: Json[] };
      return { ...b, results: b.results.map((hit) => odd.get(String(hit.slug))?.rewrite(hit) ?? hit) };
    },
  });
  const proxyUrl = await proxy.listen();
  system = await startTestSystem({
    companies: seed,
    workers: 0,
    logLevel: 'silent',
    env: { REPORTS_API_URL: proxyUrl },
  });
  proxy.target = new URL(system.sandboxUrl).origin;
  await system.ctx.startWorkers();
  run = await runEnded(system);
}, 120_000);

afterAll(async () => {
  await stopTestSystem(system);
  await proxy.close();
});

function recordOf(slug: string) {
  const i = system.seed.findIndex((c) => c.slug === slug && c.name.startsWith('Odd shape'));
  const id = system.recordIds[i]!;
  return { id, properties: system.hubspot.getCompany(id)!.properties };
}

describe('report data outside the known shapes', () => {
  it('the run ends, and every ordinary record beside the odd ones is right', () => {
    measured('bad-report-data', {
      totals: run.totals,
      errors: run.errors.map((e) => `${e.code}: ${e.message.slice(0, 120)}`),
    });
    expect(run.state).toBe('done');
    const oddNames = new Set(system.seed.filter((c) => c.name.startsWith('Odd shape')).map((c) => c.name));
    expect(wrongRecords(system).filter((w) => !oddNames.has(w.split(':')[0]!))).toEqual([]);
    const oddIds = new Set([...odd.keys()].map((slug) => recordOf(slug).id));
    expect(staleRecords(system).filter((s) => !oddIds.has(s.split(' ')[0]!))).toEqual([]);
    expect(run.totals.failed).toBe(SHAPES.filter((s) => s.outcome === 'error').length);
  });

  for (const shape of SHAPES.filter((s) => s.outcome === 'error')) {
    it(`${shape.name}: the record gets status error, the reason is in the run`, () => {
      const slug = [...odd].find(([, s]) => s === shape)![0];
      const { id, properties } = recordOf(slug);
      expect(properties.report_match_status).toBe('error');
      expect(properties.report_slug).toBe(slug);
      const error = run.errors.find((e) => e.recordId === id);
      expect(error?.code).toBe('REPORTS_BAD_RESPONSE');
      expect(error?.message).toMatch(/published shape/);
    });
  }

  for (const shape of SHAPES.filter((s) => s.outcome === 'matched')) {
    it(`${shape.name}: written as served`, () => {
      const slug = [...odd].find(([, s]) => s === shape)![0];
      const { properties } = recordOf(slug);
      const served = shape.rewrite(
        structuredClone(system.sandbox.getReport(slug)!) as unknown as Json,
      ) as Json;
      expect(properties.report_match_status).toBe('matched');
      expect(Number(properties.report_score)).toBe(score(served).overall);
      for (const [property, value] of Object.entries(shape.expect ?? {}))
        expect(properties[property], property).toBe(value);
      if (shape.name === 'very long name and pillars') {
        expect(properties.report_pillars?.length).toBeGreaterThan(6_000);
        expect(
          properties.report_pillars?.endsWith(`${LONG_PILLARS.at(-1)!.name} 29.5 (3.33333333333%)`),
        ).toBe(true);
      }
    });
  }
});
