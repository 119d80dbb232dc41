import { HUBSPOT_DEFAULT_API_VERSION, hubspotPaths } from '../../connectors/hubspot/provider.js';
import { ROUTES } from '../../src/sandbox/index.js';
import type { BackfillMeasurement, BenchLimits } from './backfill-setup.js';
import { count, fixed, markdownTable, mb, share } from './measure.js';

/** Turns a backfill measurement into the numbers the targets speak of, and those into markdown. */

export interface BackfillNumbers {
  records: number;
  seconds: number;
  recordsPerSecond: number;
  crm: {
    calls: number;
    lists: number;
    reads: number;
    writes: number;
    limited: number;
    listP50Ms: number;
    listP95Ms: number;
  };
  reports: {
    calls: number;
    reads: number;
    /** Distinct slugs that were read at least once. */
    slugsRead: number;
    searches: number;
    queries: number;
    limited: number;
    searchP50Ms: number;
    searchP95Ms: number;
  };
  distinctSlugs: number;
  /** GET /v1/reports/:slug calls per distinct slug that ended on a record (the target). */
  readsPerSlug: number;
  writeCallsPer100: number;
  /** Answers that were 429, over every call to both services. */
  limitedShare: number;
  /**
   * The least time the calls that were answered could take at each service's limit. Both limits admit a
   * whole window's budget at once (the sandbox per fixed minute from a key's first call, the CRM per rolling
   * interval), so C calls need at least floor((C - 1) / budget) whole windows.
   */
  crmBoundSeconds: number;
  reportsBoundSeconds: number;
  binding: 'CRM' | 'report service';
  shareOfBound: number;
  right: number;
}

export function leastSeconds(calls: number, perWindow: number, windowMs: number): number {
  return calls <= 0 ? 0 : (Math.floor((calls - 1) / perWindow) * windowMs) / 1000;
}

const CRM_LIST_ROUTE = `GET ${hubspotPaths(HUBSPOT_DEFAULT_API_VERSION).companies}`;

export function numbersOf(m: BackfillMeasurement, limits: BenchLimits): BackfillNumbers {
  const crmCalls = Object.values(m.stats.crm.calls).reduce((a, b) => a + b, 0);
  const crmLimited = m.stats.crm.statuses['429'] ?? 0;
  const routes = Object.values(m.stats.reports.routes);
  const reportCalls = routes.reduce((a, r) => a + r.calls, 0);
  const reportLimited = routes.reduce((a, r) => a + (r.statuses['429'] ?? 0), 0);
  const reads = m.stats.reports.routes[ROUTES.report];
  const searches = m.stats.reports.routes[ROUTES.search];
  const list = m.stats.crmCalls.routes[CRM_LIST_ROUTE];
  const seconds = m.elapsedMs / 1000;
  const crmBoundSeconds = leastSeconds(crmCalls - crmLimited, limits.crm.max, limits.crm.intervalMs);
  const reportsBoundSeconds = leastSeconds(reportCalls - reportLimited, limits.reportsPerMinute, 60_000);
  const boundSeconds = Math.max(crmBoundSeconds, reportsBoundSeconds);
  const writes = m.stats.crm.calls['companies.batchUpdate'] ?? 0;
  return {
    records: m.records,
    seconds,
    recordsPerSecond: m.records / seconds,
    crm: {
      calls: crmCalls,
      lists: m.stats.crm.calls['companies.list'] ?? 0,
      reads: m.stats.crm.calls['companies.batchRead'] ?? 0,
      writes,
      limited: crmLimited,
      listP50Ms: list?.p50Ms ?? Number.NaN,
      listP95Ms: list?.p95Ms ?? Number.NaN,
    },
    reports: {
      calls: reportCalls,
      reads: reads?.calls ?? 0,
      slugsRead: reads?.distinct ?? 0,
      searches: searches?.calls ?? 0,
      queries: searches?.distinct ?? 0,
      limited: reportLimited,
      searchP50Ms: searches?.p50Ms ?? Number.NaN,
      searchP95Ms: searches?.p95Ms ?? Number.NaN,
    },
    distinctSlugs: m.verification.distinctSlugs,
    readsPerSlug: (reads?.calls ?? 0) / Math.max(1, m.verification.distinctSlugs),
    writeCallsPer100: (writes / Math.max(1, m.records)) * 100,
    limitedShare: (crmLimited + reportLimited) / Math.max(1, crmCalls + reportCalls),
    crmBoundSeconds,
    reportsBoundSeconds,
    binding: crmBoundSeconds >= reportsBoundSeconds ? 'CRM' : 'report service',
    // A run that fits in one window of each limit has no bound to speak of.
    shareOfBound: boundSeconds > 0 ? boundSeconds / seconds : Number.NaN,
    right: m.verification.right,
  };
}

type Row = [
  label: string,
  value: (n: BackfillNumbers, m: BackfillMeasurement) => string,
  ratio?: (n: BackfillNumbers) => number,
];

const ROWS: Row[] = [
  ['records', (n) => count(n.records)],
  ['records left in the expected state', (n) => count(n.right)],
  ['elapsed', (n) => `${fixed(n.seconds, 1)} s`, (n) => n.seconds],
  ['records per second', (n) => fixed(n.recordsPerSecond, 1)],
  [
    'CRM calls (list / batch read / batch update)',
    (n) => `${count(n.crm.calls)} (${count(n.crm.lists)} / ${count(n.crm.reads)} / ${count(n.crm.writes)})`,
    (n) => n.crm.calls,
  ],
  ['CRM calls per record', (n) => fixed(n.crm.calls / n.records, 3), (n) => n.crm.calls / n.records],
  ['CRM write calls per 100 records', (n) => fixed(n.writeCallsPer100, 2), (n) => n.writeCallsPer100],
  [
    'report-service calls (read / search)',
    (n) => `${count(n.reports.calls)} (${count(n.reports.reads)} / ${count(n.reports.searches)})`,
    (n) => n.reports.calls,
  ],
  [
    'report-service calls per record',
    (n) => fixed(n.reports.calls / n.records, 3),
    (n) => n.reports.calls / n.records,
  ],
  ['distinct slugs on records', (n) => count(n.distinctSlugs)],
  ['report reads per distinct slug on records', (n) => fixed(n.readsPerSlug, 3), (n) => n.readsPerSlug],
  [
    'report reads per distinct slug read (1 = none read twice)',
    (n) => fixed(n.reports.reads / Math.max(1, n.reports.slugsRead), 3),
  ],
  ['searches per distinct query', (n) => fixed(n.reports.searches / Math.max(1, n.reports.queries), 3)],
  [
    'all report-service calls per distinct slug on records',
    (n) => fixed(n.reports.calls / Math.max(1, n.distinctSlugs), 3),
    (n) => n.reports.calls / Math.max(1, n.distinctSlugs),
  ],
  [
    '429 answers (CRM / report service)',
    (n) => `${share(n.limitedShare, 2)} (${count(n.crm.limited)} / ${count(n.reports.limited)})`,
  ],
  [
    'least time the limits allow (CRM / report service)',
    (n) => `${fixed(n.crmBoundSeconds, 1)} s / ${fixed(n.reportsBoundSeconds, 1)} s`,
  ],
  [
    'throughput as a share of that bound',
    (n) =>
      Number.isNaN(n.shareOfBound)
        ? 'n/a: the run fits in one window of each limit'
        : `${share(n.shareOfBound)} (${n.binding} bound)`,
  ],
  [
    'local CRM list call time p50 / p95',
    (n) => `${fixed(n.crm.listP50Ms, 0)} ms / ${fixed(n.crm.listP95Ms, 0)} ms`,
  ],
  [
    'sandbox search call time p50 / p95',
    (n) => `${fixed(n.reports.searchP50Ms, 0)} ms / ${fixed(n.reports.searchP95Ms, 0)} ms`,
  ],
  ['connector peak RSS (start of run)', (_n, m) => `${mb(m.memory.peakRss)} (${mb(m.memory.startRss)})`],
  [
    'connector peak V8 heap used (start of run)',
    (_n, m) => `${mb(m.memory.peakHeapUsed)} (${mb(m.memory.startHeapUsed)})`,
  ],
  [
    'connector peak live heap (after a full GC, every 5 s)',
    (_n, m) => (m.memory.peakLiveHeap === null ? 'n/a' : mb(m.memory.peakLiveHeap)),
  ],
];

/** One column per way of backfilling, and the ratio naive / pipeline where both ran. */
export function backfillTable(runs: { m: BackfillMeasurement; n: BackfillNumbers }[]): string {
  const pipeline = runs.find((r) => r.m.way === 'pipeline');
  const naive = runs.find((r) => r.m.way === 'naive');
  const header = ['measure', ...runs.map((r) => r.m.way)];
  const withRatio = pipeline !== undefined && naive !== undefined;
  if (withRatio) header.push('naive ÷ pipeline');
  const rows = ROWS.map(([label, value, ratio]) => {
    const cells = [label, ...runs.map((r) => value(r.n, r.m))];
    if (withRatio) cells.push(ratio ? `${fixed(ratio(naive.n) / ratio(pipeline.n), 1)}×` : '');
    return cells;
  });
  return markdownTable(header, rows);
}

export interface TargetCheck {
  target: string;
  value: string;
  /** null: this run cannot tell. */
  met: boolean | null;
}

export function backfillTargets(n: BackfillNumbers): TargetCheck[] {
  return [
    {
      target: 'report reads per distinct slug ≤ 1.02',
      value: fixed(n.readsPerSlug, 3),
      met: n.readsPerSlug <= 1.02,
    },
    {
      target: 'CRM write calls per 100 records ≤ 1.05',
      value: fixed(n.writeCallsPer100, 2),
      met: n.writeCallsPer100 <= 1.05,
    },
    {
      target: 'throughput ≥ 90% of the rate-limit bound',
      value: share(n.shareOfBound),
      met: Number.isNaN(n.shareOfBound) ? null : n.shareOfBound >= 0.9,
    },
    { target: '429 answers < 1% of calls', value: share(n.limitedShare, 2), met: n.limitedShare < 0.01 },
  ];
}

export function targetsTable(checks: TargetCheck[]): string {
  return markdownTable(
    ['target', 'this run', 'met'],
    checks.map((c) => [c.target, c.value, c.met === null ? 'n/a' : c.met ? 'yes' : '**no**']),
  );
}
