import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { LocalHubSpot } from '../connectors/hubspot/local/local-hubspot.js';
import type { LocalSalesforce } from '../connectors/salesforce/local/server.js';
import { checkRedis } from '../src/app/bootstrap.js';
import { type AppContext, createAppContext } from '../src/app/context.js';
import { InstallationService } from '../src/app/installation-service.js';
import { loadConfig } from '../src/config.js';
import type { CrmKind } from '../src/crm/connector.js';
import type { LocalRecordView, LocalStandInOptions } from '../src/crm/provider.js';
import { createLogger } from '../src/log.js';
import type { PipelineWorkers } from '../src/pipeline/workers.js';
import { crmKind, kindOf, providerFor, providers } from '../src/providers.js';
import {
  createSandbox,
  type FaultSettings,
  type FixtureReport,
  type ReportSandbox,
} from '../src/sandbox/index.js';
import { createServerApp } from '../src/server/app.js';
import { demoCompanies, type SeedCompanyInput } from './demo-seed.js';
import { createComponentPreview, PREVIEW_PATH } from './preview/page.js';

/**
 * Everything on one machine: the report sandbox, the local stand-in of the CRM asked for, the HTTP server and
 * the workers, wired with the production code and only pointed at local services. Used by `demo`, the
 * integration tests and the benchmarks; production code never imports this folder.
 */

export interface LocalSystemOptions {
  crm?: string;
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
  /** The connector's REPORTS_RATE_PER_MINUTE: the sandbox's limit when left out; null: not set. */
  connectorRatePerMinute?: number | null;
  /** Faults the sandbox has from its start, before the first sync reads anything (a throttle, a failure share). */
  sandboxFaults?: FaultSettings;
  crmRateLimit?: { max: number; intervalMs: number };
  /** Whether the local CRM streams record changes from its start (LocalStandInOptions.changeEvents). */
  crmChangeEvents?: LocalStandInOptions['changeEvents'];
  fixtures?: FixtureReport[];
  /** Extra environment for the connector (REPORTS_RATE_PER_MINUTE, ...). */
  env?: Record<string, string>;
  /**
   * Starts the installation's first sync (the default). Without it the records are seeded and the fields made,
   * and nothing is written: a test previews or starts the write itself.
   */
  firstSync?: boolean;
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
  /** The latest alert line and its time (`report_alert`, `report_alert_at`). */
  alert: string | null;
  alertAt: string | null;
  /** `report_link_source`: who made the link (or, on a `no_match`, who decided there is none). */
  linkSource: string | null;
}

export interface LocalCrmView {
  kind: CrmKind;
  record(id: string): LocalCrmRecord | undefined;
}

export interface LocalSystem {
  ctx: AppContext;
  sandbox: ReportSandbox;
  sandboxUrl: string;
  crm: LocalCrmView;
  crmUrl: string;
  /** The local HubSpot (tests reach into it for faults and counters); throws when the system runs another CRM. */
  readonly hubspot: LocalHubSpot;
  /** Throws when the system runs another CRM. */
  readonly hubspotUrl: string;
  /** The local Salesforce, when the CRM is Salesforce. */
  salesforce: LocalSalesforce | null;
  appUrl: string;
  /** The demo's page showing every state of each CRM's record component, as previews. */
  componentPreviewUrl: string;
  installationId: string;
  seed: SeedCompanyInput[];
  /** Record id in the local CRM of each seed company, same order. */
  recordIds: string[];
  workers: PipelineWorkers[];
  /** What a `report-connector worker` process needs, besides the shared settings, to reach the local CRM. */
  crmWorkerEnv: Record<string, string>;
  close(): Promise<void>;
}

function toLocalRecord(view: LocalRecordView | undefined): LocalCrmRecord | undefined {
  if (!view) return undefined;
  const score = view.fields.score ?? null;
  return {
    id: view.id,
    name: view.name,
    slug: view.fields.slug ?? null,
    status: view.fields.matchStatus ?? null,
    score: score === null ? null : Number(score),
    band: view.fields.band ?? null,
    syncedAt: view.fields.syncedAt ?? null,
    alert: view.fields.alert ?? null,
    alertAt: view.fields.alertAt ?? null,
    linkSource: view.fields.linkSource ?? null,
  };
}

export async function startLocalSystem(options: LocalSystemOptions = {}): Promise<LocalSystem> {
  const logger = options.logger ?? createLogger(options.logLevel ?? 'warn');
  const sandboxRate = options.sandboxRateLimitPerMinute ?? 6_000;
  const sandbox = createSandbox({
    rateLimitPerMinute: sandboxRate,
    webhookRetryDelaysMs: [200, 1_000, 5_000],
    ...(options.fixtures ? { fixtures: options.fixtures } : {}),
  });
  if (options.sandboxFaults) sandbox.setFaults(options.sandboxFaults);
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
  const provider = providerFor(crmKind(options.crm ?? providers[0].kind));
  let standIn: Awaited<ReturnType<typeof provider.startLocal>>;
  try {
    standIn = await provider.startLocal({
      appUrl,
      ...(options.crmRateLimit ? { rateLimit: options.crmRateLimit } : {}),
      ...(options.crmChangeEvents ? { changeEvents: options.crmChangeEvents } : {}),
    });
  } catch (err) {
    server.close();
    await sandboxListening.close();
    throw err;
  }

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
        // The write scope too, so the demo can request reports (a read-only key is refused with advice).
        REPORTS_API_KEY: 'sk_sandbox_write',
        // The connector paces itself to the service's limit, here known because the sandbox is ours; null: not
        // set, the connector learns the key's rate as a deployment that does not know it does.
        ...(options.connectorRatePerMinute === null
          ? {}
          : { REPORTS_RATE_PER_MINUTE: String(options.connectorRatePerMinute ?? sandboxRate) }),
        REPORTS_WEBHOOK_SECRET: webhookSecret,
        ...standIn.env,
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
    const app = createServerApp(ctx, {
      // Tests and the demo read fresh gauges within a second.
      metricsRefreshMs: 1_000,
      adminLinks: [{ href: PREVIEW_PATH, label: 'previews of the CRM components in each state' }],
    });
    // The component preview is demo equipment: it answers its own paths ahead of the connector's routes.
    const preview = createComponentPreview();
    server.on('request', (req, res) => {
      if (!preview(req, res)) app(req, res);
    });
    for (let i = 0; i < (options.workers ?? 1); i++) workers.push(await ctx.startWorkers());

    const installation = await provider.installFromToken(config, ctx.installations);
    if (!installation) throw new Error(`the local ${provider.label} installation was not created`);
    const recordIds = await standIn.seed(seed, async () => {
      await ctx.runtime.connectorFor(installation).ensureFields();
    });
    if (options.firstSync !== false) await new InstallationService(ctx).installed(installation);

    const local = standIn;
    const other = (what: string): never => {
      throw new Error(`this local system runs ${provider.label}, not ${what}`);
    };
    return {
      ctx,
      sandbox,
      sandboxUrl: sandboxListening.url,
      crm: { kind: kindOf(provider), record: (id) => toLocalRecord(local.read(id)) },
      crmUrl: local.url,
      get hubspot() {
        return local.kind === 'hubspot' ? local.handle : other('HubSpot');
      },
      get hubspotUrl() {
        return local.kind === 'hubspot' ? local.url : other('HubSpot');
      },
      salesforce: local.kind === 'salesforce' ? local.handle : null,
      appUrl,
      componentPreviewUrl: `${appUrl}${PREVIEW_PATH}`,
      installationId: installation.id,
      seed,
      recordIds,
      workers,
      crmWorkerEnv: local.workerEnv,
      async close() {
        server.closeAllConnections();
        await new Promise((r) => server.close(r));
        await ctx.close();
        await local.close();
        await sandboxListening.close();
      },
    };
  } catch (err) {
    server.close();
    await ctx.close();
    await standIn.close();
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
    ...(c.redisClusterNodes
      ? { REDIS_CLUSTER_NODES: c.redisClusterNodes.map((n) => `${n.host}:${n.port}`).join(',') }
      : {}),
    REDIS_PREFIX: c.redisPrefix,
    ENCRYPTION_KEY: c.encryptionKey.toString('base64'),
    ADMIN_TOKEN: c.adminToken,
    REPORTS_API_URL: c.reports.apiUrl,
    ...(c.reportsRatePerMinute === undefined
      ? {}
      : { REPORTS_RATE_PER_MINUTE: String(c.reportsRatePerMinute) }),
    ...system.crmWorkerEnv,
    // 'info' at least: readiness is read from the "worker running" line.
    LOG_LEVEL: 'info',
  };
  if (c.reports.apiKey) env.REPORTS_API_KEY = c.reports.apiKey;
  return { ...env, ...extra };
}
