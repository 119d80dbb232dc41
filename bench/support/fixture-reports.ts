import { seededRandom } from '../../fixtures/seeded-random.js';
import type { FixtureReport } from '../../src/sandbox/index.js';

/**
 * Extra sandbox reports for the benchmarks, so that a backfill of thousands of companies links thousands of
 * distinct slugs. Deterministic (a seeded generator): two runs of a bench see the same data. Names are three
 * words from lists in which no word starts another, so a search for one name finds that report and no other;
 * one in twenty is unpublished, one in three has no verification.
 */

const FIRST = [
  'Albrook',
  'Brantley',
  'Corvane',
  'Dellmark',
  'Estwick',
  'Farrow',
  'Glenmere',
  'Hadley',
  'Ivanhold',
  'Jessop',
  'Kelloway',
  'Linford',
  'Maddox',
  'Norbury',
  'Oakhurst',
  'Pemberly',
  'Radcliff',
  'Selwyn',
  'Thornbury',
  'Upfield',
  'Varney',
  'Whitcombe',
  'Yardley',
  'Ashdown',
  'Blakemore',
  'Calloway',
  'Dunmore',
  'Everleigh',
  'Fenwick',
  'Gresham',
];
const SECOND = [
  'Bayside',
  'Cliffton',
  'Dunes',
  'Eastgate',
  'Fairhaven',
  'Highmoor',
  'Ironbridge',
  'Kingsway',
  'Lakeshore',
  'Millbrook',
  'Northgate',
  'Oldfield',
  'Pinehurst',
  'Riverside',
  'Stonegate',
  'Westbury',
  'Brookdale',
  'Marshfield',
  'Harrowgate',
  'Wychwood',
];
const THIRD = [
  'Assemblies',
  'Glassworks',
  'Cartographics',
  'Diagnostics',
  'Fabrication',
  'Hydraulics',
  'Lenscraft',
  'Metrology',
  'Nanofab',
  'Orthotics',
  'Printworks',
  'Sensorics',
  'Telemetry',
  'Ultrasonics',
  'Vineyards',
  'Weavers',
  'Xenotech',
  'Zymurgy',
  'Acoustics',
  'Kilnworks',
];
const PLACES = [
  'Porto, Portugal',
  'Lyon, France',
  'Graz, Austria',
  'Aarhus, Denmark',
  'Tampere, Finland',
  'Bilbao, Spain',
  'Utrecht, Netherlands',
  'Gdansk, Poland',
  'Brno, Czechia',
  'Leeds, United Kingdom',
  'Austin, United States',
  'Osaka, Japan',
  'Recife, Brazil',
  'Cork, Ireland',
  'Bergen, Norway',
];
const INDUSTRIES = [
  'Software',
  'Energy',
  'Healthcare',
  'Fintech',
  'Media',
  'Retail',
  'Cybersecurity',
  'Education',
];
const STAGES = ['Seed', 'Series A', 'Series B', 'Series C', 'Growth'];

/** How many distinct names the word lists can make. */
export const MAX_EXTRA_REPORTS = FIRST.length * SECOND.length * THIRD.length;

export class TooManyReportsError extends Error {
  readonly code = 'BENCH_TOO_MANY_REPORTS';
  constructor(readonly asked: number) {
    super(`at most ${MAX_EXTRA_REPORTS} extra reports can be generated; ${asked} were asked for`);
    this.name = 'TooManyReportsError';
  }
}

function pick<T>(list: readonly T[], index: number): T {
  return list[index % list.length]!;
}

function oneDecimal(value: number): number {
  return Math.round(value * 10) / 10;
}

function bandOf(overall: number): string {
  if (overall >= 70) return 'strong';
  if (overall >= 40) return 'moderate';
  return 'weak';
}

function generatedReport(i: number, random: () => number): FixtureReport {
  const name = [
    pick(FIRST, i),
    pick(SECOND, Math.floor(i / FIRST.length)),
    pick(THIRD, Math.floor(i / (FIRST.length * SECOND.length))),
  ].join(' ');
  const slug = name.toLowerCase().replace(/ /g, '-');
  const industry = pick(INDUSTRIES, Math.floor(random() * INDUSTRIES.length));
  const geography = pick(PLACES, Math.floor(random() * PLACES.length));
  const stage = pick(STAGES, Math.floor(random() * STAGES.length));
  const overall = oneDecimal(20 + random() * 75);
  const day = 1 + (i % 28);
  const scoredAt = `2025-0${1 + (i % 9)}-${String(day).padStart(2, '0')}T10:00:00Z`;
  return {
    slug,
    name,
    industry,
    stage,
    geography,
    description: `${name}, ${industry}, ${geography}.`,
    published: i % 20 !== 19,
    score: {
      overall,
      band: bandOf(overall),
      pillars: [
        { name: 'Team', score: oneDecimal(overall + 5 * (random() - 0.5)), weight: 0.4 },
        { name: 'Market', score: oneDecimal(overall + 5 * (random() - 0.5)), weight: 0.3 },
        { name: 'Product', score: oneDecimal(overall + 5 * (random() - 0.5)), weight: 0.3 },
      ],
      strengths: ['Experienced founding team'],
      risks: ['Concentrated customer base'],
      scored_at: scoredAt,
    },
    verification:
      i % 3 === 0
        ? null
        : { verified_score: overall, verdict: 'confirmed', signed_at: scoredAt.replace('T10', 'T12') },
    report_url: `https://reports.example.com/r/${slug}`,
  };
}

/** The shipped fixtures followed by `extra` generated reports. */
export function withExtraReports(base: readonly FixtureReport[], extra: number): FixtureReport[] {
  if (extra > MAX_EXTRA_REPORTS) throw new TooManyReportsError(extra);
  const random = seededRandom(20_261_121);
  const out = [...base];
  for (let i = 0; i < extra; i++) out.push(generatedReport(i, random));
  return out;
}
