import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import {
  createLocalHubSpot,
  LOCAL_HUBSPOT_CLIENT_ID,
  LOCAL_HUBSPOT_CLIENT_SECRET,
  type LocalHubSpot,
} from '../../connectors/hubspot/local/index.js';
import { createLocalSalesforce, type LocalSalesforce } from '../../connectors/salesforce/local/index.js';
import { loadConfig } from '../config.js';
import { createLogger } from '../log.js';
import type { PipelineWorkers } from '../pipeline/workers.js';
import { createSandbox, type FixtureReport, type ReportSandbox } from '../sandbox/index.js';
import { createServerApp } from '../server/app.js';
import { checkRedis, ensureTokenModeInstallations } from './bootstrap.js';
import { type AppContext, createAppContext } from './context.js';
import { demoCompanies, type ExpectedOutcome, type SeedCompanyInput } from './demo-seed.js';
import { InstallationService } from './installation-service.js';
import { ensureSalesforceTokenMode } from './salesforce-token-mode.js';

/**
 * Everything on one machine: the report sandbox, a local CRM, the HTTP server and the workers, wired with the
 * production code and only pointed at local services. Used by `demo`, the integration tests and the
 * benchmarks.
 */

export interface LocalSystemOptions {
  crm?: 'hubspot' | 'salesforce';
  /** Companies to seed, or how many to make from the fixtures. */
  companies?: number | SeedCompanyInput[];
  redisUrl?: string;
  /** Redis key and queue prefix; tests pass a fresh one each. */
  prefix?: string;
  port?: number;
  logger?: Logger;
  logLevel?: string;
  /** Workers in this process (0 for tests that run their own worker processes). */
  workers?: number;
  sandboxRateLimitPerMinute?: number;
  crmRateLimit?: { max: number; intervalMs: number };
  fixtures?: FixtureReport[];
  /** Extra environment for the connector (REPORTS_RATE_PER_MINUTE, ...). */
  env?: Record<string, string>;
}

/** A CRM-neutral look at a record of the local CRM, in the connector's terms. */
export interface LocalCrmRecord {
  id: string;
  name: string | null;
  slug: string | null;
  status: string | null;
  score: number | null;
  band: string | null;
  syncedAt: string | null;
}

export interface LocalCrmView {
  kind: 'hubspot' | 'salesforce';
  record(id: string): LocalCrmRecord | undefined;
}

export interface LocalSystem {
  ctx: AppContext;
  sandbox: ReportSandbox;
  sandboxUrl: string;
  crm: LocalCrmView;
  crmUrl: string;
  /** The local HubSpot, when the CRM is HubSpot (tests reach into it for faults and counters). */
  hubspot: LocalHubSpot;
  hubspotUrl: string;
  /** The local Salesforce, when the CRM is Salesforce. */
  salesforce: LocalSalesforce | null;
  appUrl: string;
  installationId: string;
  seed: SeedCompanyInput[];
  /** Record id in the local CRM of each seed company, same order. */
  recordIds: string[];
  workers: PipelineWorkers[];
  close(): Promise<void>;
}

export async function startLocalSystem(options: LocalSystemOptions = {}): Promise<LocalSystem> {
  const logger = options.logger ?? createLogger(options.logLevel ?? 'warn');
  const sandboxRate = options.sandboxRateLimitPerMinute ?? 6_000;
  const sandbox = createSandbox({
    rateLimitPerMinute: sandboxRate,
    webhookRetryDelaysMs: [200, 1_000, 5_000],
    ...(options.fixtures ? { fixtures: options.fixtures } : {}),
  });
  const sandboxListening = await sandbox.listen(0);
  // The public URL must be known before the configuration is, and the server before its app: listen first.
  const server: Server = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', resolve);
    });
  } catch (err) {
    await sandboxListening.close();
    throw err;
  }
  const appUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const privateAppToken = `pat-local-${randomBytes(8).toString('hex')}`;
  const hubspot = createLocalHubSpot({
    privateAppToken,
    ...(options.crmRateLimit ? { rateLimit: options.crmRateLimit } : {}),
    webhookUrl: `${appUrl}/webhooks/hubspot`,
  });
  const hubspotListening = await hubspot.listen(0);
  const useSalesforce = options.crm === 'salesforce';
  const salesforce = useSalesforce ? createLocalSalesforce({}) : null;
  const salesforceListening = salesforce ? await salesforce.listen(0) : null;
  const crmOverrides: Record<string, string> =
    salesforce && salesforceListening
      ? {
          SALESFORCE_INSTANCE_URL: salesforceListening.url,
          SALESFORCE_LOGIN_URL: salesforceListening.url,
          SALESFORCE_ACCESS_TOKEN: salesforce.issueAccessToken(),
          SALESFORCE_POLL_SECONDS: '2',
        }
      : { HUBSPOT_ACCESS_TOKEN: privateAppToken };

  const webhookSecret = `whsec_${randomBytes(24).toString('base64')}`;

  const config = loadConfig(
    {},
    {
      mode: 'demo',
      envFile: null,
      overrides: {
        REDIS_URL: options.redisUrl ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
        REDIS_PREFIX: options.prefix ?? 'rc-demo',
        APP_URL: appUrl,
        PORT: String((server.address() as AddressInfo).port),
        REPORTS_API_URL: sandboxListening.url,
        REPORTS_API_KEY: 'sk_sandbox_read',
        // The connector paces itself to the service's limit, here known because the sandbox is ours.
        REPORTS_RATE_PER_MINUTE: String(sandboxRate),
        REPORTS_WEBHOOK_SECRET: webhookSecret,
        HUBSPOT_API_URL: hubspotListening.url,
        HUBSPOT_AUTHORIZE_URL: `${hubspotListening.url}/oauth/authorize`,
        HUBSPOT_CLIENT_ID: LOCAL_HUBSPOT_CLIENT_ID,
        HUBSPOT_CLIENT_SECRET: LOCAL_HUBSPOT_CLIENT_SECRET,
        ...crmOverrides,
        LOG_LEVEL: options.logLevel ?? 'warn',
        ...options.env,
      },
    },
  );
  const ctx = createAppContext(config, { logger });
  const workers: PipelineWorkers[] = [];
  try {
    await checkRedis(ctx);
    sandbox.configureWebhook(`${appUrl}/webhooks/reports`, webhookSecret);

    const seed = Array.isArray(options.companies)
      ? options.companies
      : demoCompanies(sandbox.listReports(), options.companies ?? 300);
    server.on('request', createServerApp(ctx));
    for (let i = 0; i < (options.workers ?? 1); i++) workers.push(await ctx.startWorkers());

    let recordIds: string[];
    let installationId: string;
    if (salesforce) {
      // Salesforce refuses values for fields that do not exist yet: create them, seed, then install.
      const installation = await ensureSalesforceTokenMode(ctx);
      if (!installation) throw new Error('the local Salesforce installation was not created');
      await ctx.runtime.connectorFor(installation).ensureFields();
      recordIds = salesforce
        .seedAccounts(
          seed.map((c) => ({
            Name: c.name,
            Website: c.domain ? `https://${c.domain}` : null,
            Industry: c.industry,
            BillingCountry: c.country,
            BillingCity: c.city,
            ...(c.slug ? { Report_Slug__c: c.slug } : {}),
          })),
        )
        .map((a) => a.Id);
      await new InstallationService(ctx).installed(installation);
      installationId = installation.id;
    } else {
      recordIds = hubspot
        .seedCompanies(
          seed.map((c) => {
            const props: Record<string, string> = { name: c.name };
            if (c.domain) props.domain = c.domain;
            if (c.country) props.country = c.country;
            if (c.city) props.city = c.city;
            if (c.industry) props.industry = c.industry;
            if (c.slug) props.report_slug = c.slug;
            return props;
          }),
        )
        .map((c) => c.id);
      const [installation] = await ensureTokenModeInstallations(ctx);
      if (!installation) throw new Error('the local HubSpot installation was not created');
      installationId = installation.id;
    }

    const empty = (v: string | undefined) => (v === undefined || v === '' ? null : v);
    const hubspotView: LocalCrmView = {
      kind: 'hubspot',
      record(id) {
        const c = hubspot.getCompany(id);
        if (!c || c.deleted) return undefined;
        const p = c.properties;
        return {
          id,
          name: empty(p.name),
          slug: empty(p.report_slug),
          status: empty(p.report_match_status),
          score: empty(p.report_score) === null ? null : Number(p.report_score),
          band: empty(p.report_band),
          syncedAt: empty(p.report_synced_at),
        };
      },
    };
    const salesforceView = (org: LocalSalesforce): LocalCrmView => ({
      kind: 'salesforce',
      record(id) {
        const a = org.getAccount(id);
        if (!a || a.IsDeleted) return undefined;
        const text = (v: unknown) => (v === null || v === undefined || v === '' ? null : String(v));
        const score = a.custom.Report_Score__c;
        const synced = a.custom.Report_Synced_At__c;
        return {
          id,
          name: a.Name,
          slug: text(a.custom.Report_Slug__c),
          status: text(a.custom.Report_Match_Status__c),
          score: score === null || score === undefined || score === '' ? null : Number(score),
          band: text(a.custom.Report_Band__c),
          syncedAt:
            synced === null || synced === undefined || synced === ''
              ? null
              : new Date(synced as string | number).toISOString(),
        };
      },
    });
    const crm = salesforce ? salesforceView(salesforce) : hubspotView;
    return {
      ctx,
      sandbox,
      sandboxUrl: sandboxListening.url,
      crm,
      crmUrl: salesforceListening?.url ?? hubspotListening.url,
      hubspot,
      salesforce,
      hubspotUrl: hubspotListening.url,
      appUrl,
      installationId,
      seed,
      recordIds,
      workers,
      async close() {
        server.closeAllConnections();
        await new Promise((r) => server.close(r));
        await ctx.close();
        await hubspotListening.close();
        await salesforceListening?.close();
        await sandboxListening.close();
      },
    };
  } catch (err) {
    server.close();
    await ctx.close();
    await hubspotListening.close();
    await salesforceListening?.close();
    await sandboxListening.close();
    throw err;
  }
}

/** The environment a `report-connector worker` process needs to join `system`: same Redis, prefix, key, upstreams. */
export function workerEnvFor(
  system: LocalSystem,
  extra: Record<string, string> = {},
): Record<string, string> {
  const c = system.ctx.config;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    REDIS_URL: c.redisUrl,
    REDIS_PREFIX: c.redisPrefix,
    ENCRYPTION_KEY: c.encryptionKey.toString('base64'),
    ADMIN_TOKEN: c.adminToken,
    REPORTS_API_URL: c.reports.apiUrl,
    REPORTS_RATE_PER_MINUTE: String(c.reportsRatePerMinute),
    HUBSPOT_API_URL: c.hubspot.apiUrl,
    // 'info' at least: readiness is read from the "worker running" line.
    LOG_LEVEL: 'info',
  };
  if (c.reports.apiKey) env.REPORTS_API_KEY = c.reports.apiKey;
  if (c.hubspot.clientId) env.HUBSPOT_CLIENT_ID = c.hubspot.clientId;
  if (c.hubspot.clientSecret) env.HUBSPOT_CLIENT_SECRET = c.hubspot.clientSecret;
  return { ...env, ...extra };
}

/** Whether a CRM record is in the state its seed company expects. */
export function isAsExpected(expected: ExpectedOutcome, r: LocalCrmRecord | undefined): boolean {
  if (r === undefined) return false;
  switch (expected.status) {
    case 'matched':
      return r.status === 'matched' && r.slug === expected.slug && r.score !== null;
    case 'not_published':
      return r.status === 'not_published' && r.slug === expected.slug && r.score === null;
    case 'needs_review':
    case 'no_match':
      return r.status === expected.status && r.slug === null;
  }
}
