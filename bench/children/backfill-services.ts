/**
 * Child process of bench/backfill.ts: the services the connector talks to (the report sandbox and the local
 * HubSpot), each with its rate limit, seeded with the bench's companies. They run here so that their memory
 * and CPU are not counted as the connector's; what they answer is logged around their apps (call-log.ts).
 * Calls: `stats`, `resetStats`, `verify`.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hubspotField } from '../../connectors/hubspot/fields/field-names.js';
import { createLocalHubSpot, type LocalHubSpotStats } from '../../connectors/hubspot/local/index.js';
import { hubspotSeedProperties } from '../../connectors/hubspot/local/stand-in.js';
import { demoCompanies } from '../../local/demo-seed.js';
import { MATCH_STATUSES } from '../../src/fields.js';
import { createSandbox, loadFixtureReports, ROUTES } from '../../src/sandbox/index.js';
import { CallLog, type CallLogSnapshot } from '../support/call-log.js';
import { withExtraReports } from '../support/fixture-reports.js';
import { serveRpc } from '../support/rpc.js';

export interface BackfillServicesConfig {
  records: number;
  extraReports: number;
  crmLimit: { max: number; intervalMs: number };
  reportsPerMinute: number;
}

export interface BackfillServicesReady {
  sandboxUrl: string;
  hubspotUrl: string;
  privateAppToken: string;
  reports: number;
  seeded: number;
}

export interface ServiceStats {
  /** The local HubSpot's own counters: calls per route, answers per status, records written. */
  crm: LocalHubSpotStats;
  /** The CRM's answers per route, with their time (measured around its app). */
  crmCalls: CallLogSnapshot;
  /** The report sandbox's answers per route, distinct slugs read and queries searched, per second. */
  reports: CallLogSnapshot;
  rss: number;
}

export interface Verification {
  records: number;
  /** Records whose final CRM state is the one the seed expects. */
  right: number;
  wrongSamples: string[];
  statuses: Record<string, number>;
  /** Distinct `report_slug` values on records that ended matched or not_published. */
  distinctSlugs: number;
}

export type BackfillServicesProtocol = {
  stats: { args: null; result: ServiceStats };
  resetStats: { args: null; result: null };
  verify: { args: null; result: Verification };
};

const SLUG = hubspotField('slug').hubspot;
const STATUS = hubspotField('matchStatus').hubspot;
const SCORE = hubspotField('score').hubspot;

/** Sandbox routes; the key is the slug read or the query searched, so repeats can be told from firsts. */
function classifyReportCall(req: IncomingMessage): { route: string; key?: string } | null {
  const url = new URL(req.url ?? '/', 'http://sandbox');
  if (url.pathname.startsWith('/api/v1/reports/')) {
    return { route: ROUTES.report, key: decodeURIComponent(url.pathname.slice('/api/v1/reports/'.length)) };
  }
  if (url.pathname === '/api/v1/search')
    return { route: ROUTES.search, key: url.searchParams.get('q') ?? '' };
  if (url.pathname === '/api/v1/graphql') return { route: ROUTES.graphql };
  return null;
}

function classifyCrmCall(req: IncomingMessage): { route: string } | null {
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  return path.startsWith('/crm/') ? { route: `${req.method} ${path}` } : null;
}

async function listen(server: Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

await serveRpc<BackfillServicesProtocol, BackfillServicesConfig, BackfillServicesReady>(async (config) => {
  const fixtures = withExtraReports(loadFixtureReports(), config.extraReports);
  const sandbox = createSandbox({ fixtures, rateLimitPerMinute: config.reportsPerMinute });
  const reportCalls = new CallLog(classifyReportCall);
  const sandboxServer = createServer(reportCalls.wrap(sandbox.app));
  const sandboxPort = await listen(sandboxServer);

  const privateAppToken = `pat-bench-${randomBytes(8).toString('hex')}`;
  const hubspot = createLocalHubSpot({ privateAppToken, rateLimit: config.crmLimit });
  const crmCalls = new CallLog(classifyCrmCall);
  const hubspotServer = createServer(crmCalls.wrap(hubspot.app));
  const hubspotPort = await listen(hubspotServer);

  const seed = demoCompanies(sandbox.listReports(), config.records);
  const ids = hubspot.seedCompanies(seed.map(hubspotSeedProperties)).map((s) => s.id);

  const verify = (): Verification => {
    const statuses: Record<string, number> = Object.fromEntries(MATCH_STATUSES.map((s) => [s, 0]));
    const slugs = new Set<string>();
    const wrongSamples: string[] = [];
    let right = 0;
    seed.forEach((company, i) => {
      const stored = hubspot.store.resolve(ids[i]!);
      const slug = stored ? hubspot.store.valueOf(stored, SLUG) : '';
      const status = stored ? hubspot.store.valueOf(stored, STATUS) : '';
      const score = stored ? hubspot.store.valueOf(stored, SCORE) : '';
      statuses[status || '(none)'] = (statuses[status || '(none)'] ?? 0) + 1;
      if (slug && (status === 'matched' || status === 'not_published')) slugs.add(slug);
      const e = company.expected;
      const ok =
        (e.status === 'matched' && status === 'matched' && slug === e.slug && score !== '') ||
        (e.status === 'not_published' && status === 'not_published' && slug === e.slug && score === '') ||
        ((e.status === 'needs_review' || e.status === 'no_match') && status === e.status && slug === '');
      if (ok) right += 1;
      else if (wrongSamples.length < 5) {
        wrongSamples.push(
          `${company.name}: expected ${JSON.stringify(e)}, got ${status || 'nothing'} ${slug}`,
        );
      }
    });
    return { records: seed.length, right, wrongSamples, statuses, distinctSlugs: slugs.size };
  };

  return {
    ready: {
      sandboxUrl: `http://127.0.0.1:${sandboxPort}/api`,
      hubspotUrl: `http://127.0.0.1:${hubspotPort}`,
      privateAppToken,
      reports: fixtures.length,
      seeded: ids.length,
    },
    handlers: {
      stats: () => ({
        crm: hubspot.stats(),
        crmCalls: crmCalls.snapshot(),
        reports: reportCalls.snapshot(),
        rss: process.memoryUsage().rss,
      }),
      resetStats: () => {
        hubspot.resetStats();
        sandbox.resetRequestCounts();
        sandbox.resetRateLimits();
        reportCalls.reset();
        crmCalls.reset();
        // A fresh CRM budget window too: setting up used a little of it.
        hubspot.setRateLimit(config.crmLimit.max, config.crmLimit.intervalMs);
        return null;
      },
      verify,
    },
    close: async () => {
      for (const server of [sandboxServer, hubspotServer]) {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
      await sandbox.close();
    },
  };
});
