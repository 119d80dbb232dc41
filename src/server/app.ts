import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import helmet from 'helmet';
import proxyaddr from 'proxy-addr';
import { AdminActions } from '../admin/admin-actions.js';
import { createAdminRouter } from '../admin/router.js';
import { adminPageHeaders } from '../admin/security-headers.js';
import type { AdminLink } from '../admin/views/dashboard.js';
import { oauthResultPage } from '../admin/views/oauth-result.js';
import type { AppContext } from '../app/context.js';
import { InstallationService } from '../app/installation-service.js';
import { createRecordCardHost } from '../cards/record-card-host.js';
import { installationId, installationStatusSchema } from '../installations/store.js';
import { setLaneMetrics } from '../pipeline/lane-metrics.js';
import { setOldestQueuedMetric } from '../pipeline/liveness-watch.js';
import type { PipelineWorkers } from '../pipeline/workers.js';
import { kindOf, providers } from '../providers.js';
import { CrmEventMarks } from '../webhooks/crm-event-marks.js';
import { createReportWebhookRouter } from '../webhooks/report-route.js';
import {
  AddressWindow,
  limitRefusals,
  limitRequests,
  OAUTH_REQUESTS_PER_MINUTE,
  WEBHOOK_REFUSALS_PER_MINUTE,
} from './address-limits.js';
import { createPublicPagesRouter } from './public-pages.js';
import {
  isRedisUnavailable,
  REDIS_UNAVAILABLE_CODE,
  REDIS_UNAVAILABLE_MESSAGE,
  redisReady,
  within,
} from './redis-availability.js';
import { DeadlineReportWebhookHandler, WEBHOOK_DEADLINE_MS } from './webhook-deadline.js';
import { headersSetBy, takesRequest, WebhookFastPath } from './webhook-fast-path.js';

/**
 * The HTTP server: health, metrics, OAuth installs, inbound webhooks and the admin page. It only enqueues;
 * the work happens on the queue, in this process (`start`) or in `worker` processes.
 */

/** Health, readiness and metrics answer within 2 s: this leaves room for the rest of the request. */
export const PROBE_TIMEOUT_MS = 1_500;

export interface ServerOptions {
  /** Workers running in this process, if any (`start`); readiness then requires them. */
  workers?: PipelineWorkers;
  /** More pages this server answers for, listed on the admin's installations page (the demo's previews). */
  adminLinks?: readonly AdminLink[];
}

/** What node:http calls for each request (`http.createServer(handler)`). */
export type ServerHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** Express's compiled TRUST_PROXY, as `proxy-addr` takes it. */
type TrustFn = (address: string, hop: number) => boolean;

export function createServerApp(ctx: AppContext, options: ServerOptions = {}): ServerHandler {
  const app = express();
  app.disable('x-powered-by');
  // Nobody's X-Forwarded-For is believed unless TRUST_PROXY says so: req.ip is the real peer by default.
  app.set('trust proxy', ctx.config.trustProxy);
  const service = new InstallationService(ctx);
  // Every answer gets strict security headers; the admin router sets its own, looser where its page needs it,
  // and so do the OAuth result pages, which load the admin's stylesheet and script (issue 31).
  const securityHeaders = helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
      },
    },
    referrerPolicy: { policy: 'no-referrer' },
    frameguard: { action: 'deny' },
    strictTransportSecurity: ctx.config.appUrl.startsWith('https:') ? { maxAge: 180 * 24 * 3600 } : false,
  });
  app.use(securityHeaders);
  app.use('/oauth', adminPageHeaders(ctx.config.appUrl.startsWith('https:')));
  const { config } = ctx;

  app.get('/healthz', (_req, res) => {
    res.json({ ok: true });
  });

  // The probes answer within PROBE_TIMEOUT_MS whatever Redis does: a lost connection is seen from its status
  // at once, a hung one by a short race, and queued commands are never left waiting on a reconnect.
  app.get('/readyz', async (_req, res) => {
    const checks: Record<string, boolean | string> = {};
    if (!redisReady(ctx.redis)) {
      checks.redis = false;
      checks.redisError = `connection ${ctx.redis.status}`;
    } else {
      try {
        checks.redis = (await within(ctx.redis.ping(), PROBE_TIMEOUT_MS, 'Redis')) === 'PONG';
      } catch (err) {
        checks.redis = false;
        checks.redisError = (err as Error).message;
      }
    }
    if (options.workers) checks.workers = options.workers.isRunning();
    else if (checks.redis !== true || !redisReady(ctx.queues.connection)) checks.workers = false;
    else {
      try {
        const counts = await within(
          Promise.all(ctx.queues.all().map((q) => q.getWorkersCount())),
          PROBE_TIMEOUT_MS,
          'Redis',
        );
        checks.workers = counts.every((c) => c > 0);
      } catch {
        checks.workers = false;
      }
    }
    const ready = checks.redis === true && checks.workers === true;
    res.status(ready ? 200 : 503).json({ ready, checks });
  });

  app.get('/metrics', async (_req, res) => {
    let up = redisReady(ctx.redis) && redisReady(ctx.queues.connection);
    if (up) {
      try {
        const [counts, installations] = await within(
          Promise.all([ctx.queues.counts(), ctx.installations.list()]),
          PROBE_TIMEOUT_MS,
          'Redis',
        );
        for (const [queue, c] of Object.entries(counts)) {
          for (const [state, n] of Object.entries(c)) ctx.metrics.jobs.set({ queue, state }, n);
        }
        await within(
          setLaneMetrics(ctx.metrics, ctx.pipeline, counts, installations),
          PROBE_TIMEOUT_MS,
          'Redis',
        );
        await within(setOldestQueuedMetric(ctx.pipeline), PROBE_TIMEOUT_MS, 'Redis');
        // Every status of every CRM is set, zero included, so an alert on a count going up sees it start.
        ctx.metrics.installations.reset();
        for (const crm of new Set(installations.map((i) => i.crm))) {
          for (const status of installationStatusSchema.options)
            ctx.metrics.installations.set({ crm, status }, 0);
        }
        for (const i of installations) ctx.metrics.installations.inc({ crm: i.crm, status: i.status });
      } catch {
        up = false;
      }
    }
    // Redis away: this process's own metrics are still worth a scrape; redis_up says the job counts are old.
    ctx.metrics.redisUp.set(up ? 1 : 0);
    res.type(ctx.metrics.registry.contentType).send(await ctx.metrics.registry.metrics());
  });

  // Anyone may call these without credentials: per-address limits in memory keep a flood cheap.
  app.use(
    '/oauth',
    limitRequests(new AddressWindow(OAUTH_REQUESTS_PER_MINUTE, 60_000), (res) => {
      res.type('html').send(
        oauthResultPage({
          status: 429,
          tone: 'problem',
          title: 'Too many attempts',
          paragraphs: ['Too many install requests from this address: wait a minute and try again.'],
          next: [],
        }).value,
      );
    }),
  );
  const webhookRefusals = new AddressWindow(WEBHOOK_REFUSALS_PER_MINUTE, 60_000);
  app.use(
    '/webhooks',
    limitRefusals(webhookRefusals, (res) => {
      res.json({ error: 'too many refused deliveries from this address; retry later' });
    }),
  );

  const reportWebhooks = new DeadlineReportWebhookHandler({
    events: ctx.events,
    scheme: config.reports.webhookScheme,
    secrets: config.reports.webhookSecrets,
    hexHeader: config.reports.webhookHeader,
    enqueue: (event) => ctx.pipeline.enqueueReportEvent(event),
    inbox: ctx.inbox,
    kickScoreChanges: () => ctx.pipeline.kickScoreChanges(),
    logger: ctx.logger,
    metrics: ctx.metrics,
  });
  app.use(createReportWebhookRouter(reportWebhooks));
  app.use(createPublicPagesRouter(config.appUrl));

  // Each CRM's OAuth install and callback, and its inbound webhooks, as far as they are configured.
  for (const provider of providers) {
    const routers = provider.routes(config, {
      storage: { redis: ctx.redis, keys: ctx.keys, box: ctx.box },
      states: ctx.states,
      installations: ctx.installations,
      logger: ctx.logger,
      cards: createRecordCardHost(ctx, new AdminActions(ctx, service)),
      installed: async (installation) => {
        await service.admit(installation);
      },
      crmChanged: async (externalId, changes) => {
        const id = installationId(kindOf(provider), externalId);
        const installation = await ctx.installations.get(id);
        ctx.metrics.webhookEvents.inc(
          { source: provider.kind, outcome: installation ? 'accepted' : 'unknown_portal' },
          changes.length,
        );
        if (installation?.status !== 'connected') return;
        await ctx.pipeline.enqueueCrmChanges(id, changes);
      },
      eventMarks: new CrmEventMarks(ctx.redis, ctx.keys, provider.kind),
      webhookDeadlineMs: WEBHOOK_DEADLINE_MS,
      oauthPage: (page) => oauthResultPage(page).value,
    });
    for (const router of routers) app.use(router);
  }

  app.use(createAdminRouter(ctx, service, options.adminLinks ?? []));

  app.use((_req, res) => {
    res.status(404).json({ error: 'not found' });
  });
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (isRedisUnavailable(err, ctx.redis)) {
      ctx.logger.warn({ err }, 'request refused: Redis is unreachable');
      if (res.headersSent) return;
      res
        .status(503)
        .set('Retry-After', '5')
        .json({ error: REDIS_UNAVAILABLE_MESSAGE, code: REDIS_UNAVAILABLE_CODE });
      return;
    }
    ctx.logger.error({ err }, 'request failed');
    if (res.headersSent) return;
    const status = (err as { status?: number }).status;
    res.status(status && status >= 400 && status < 600 ? status : 500).json({ error: 'internal error' });
  });

  const trust = app.get('trust proxy fn') as TrustFn;
  const fastPath = new WebhookFastPath({
    handler: reportWebhooks,
    refusals: webhookRefusals,
    addressOf: (req) => proxyaddr(req, trust),
    securityHeaders: headersSetBy(securityHeaders),
    logger: ctx.logger,
    redisUnavailable: (err) => isRedisUnavailable(err, ctx.redis),
  });
  return (req, res) => {
    if (takesRequest(req)) fastPath.handle(req, res);
    else app(req, res);
  };
}
