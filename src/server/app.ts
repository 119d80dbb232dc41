import { createHash, timingSafeEqual } from 'node:crypto';
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
import { metricsRefresherFor } from '../app/metrics-refresher.js';
import { createRecordCardHost } from '../cards/record-card-host.js';
import { installationId } from '../installations/store.js';
import type { PipelineWorkers } from '../pipeline/workers.js';
import { kindOf, providers } from '../providers.js';
import {
  isRedisUnavailable,
  REDIS_UNAVAILABLE_CODE,
  REDIS_UNAVAILABLE_MESSAGE,
  redisReady,
  within,
} from '../redis-availability.js';
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
import { DeadlineReportWebhookHandler, WEBHOOK_DEADLINE_MS } from './webhook-deadline.js';
import { headersSetBy, takesRequest, WebhookFastPath } from './webhook-fast-path.js';

/**
 * The HTTP server: health, metrics, OAuth installs, inbound webhooks and the admin page. It only enqueues;
 * the work happens on the queue, in this process (`start`) or in `worker` processes.
 */

/** Health, readiness and metrics answer within 2 s: this leaves room for the rest of the request. */
export const PROBE_TIMEOUT_MS = 1_500;

export interface ServerOptions {
  /**
   * Workers running in this process, if any (`start --one-process`): whether they run shows on `/metrics`, never
   * in readiness (the server queues webhooks without them).
   */
  workers?: PipelineWorkers;
  /** How often the one loop re-reads the gauges `/metrics` takes from Redis (METRICS_REFRESH_MS). */
  metricsRefreshMs?: number;
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

  // Readiness is whether this server can do its job: queue what arrives, which needs Redis and nothing else.
  // Workers (here or in other processes) show on /metrics and the admin page; a server whose workers are down
  // still takes webhooks, and a load balancer must keep sending them. The probe answers within
  // PROBE_TIMEOUT_MS whatever Redis does: a lost connection is seen from its status at once, a hung one by a
  // short race, and queued commands are never left waiting on a reconnect. One PING, nothing else.
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
    const ready = checks.redis === true;
    res.status(ready ? 200 : 503).json({ ready, checks });
  });

  // Serves what the refresher's one loop last read from Redis: a scrape itself sends Redis nothing.
  const refresher = metricsRefresherFor(ctx, options.metricsRefreshMs);
  refresher.start();
  const metricsAllowed = bearerCheck(config.metricsToken);
  app.get('/metrics', async (req, res) => {
    if (!metricsAllowed(req.get('authorization'))) {
      res
        .status(401)
        .set('WWW-Authenticate', 'Bearer realm="report-connector metrics"')
        .json({ error: 'Send Authorization: Bearer <METRICS_TOKEN>.', code: 'UNAUTHENTICATED' });
      return;
    }
    // One PING, as readiness sends: a hung Redis shows as redis_up 0 in this scrape, not at the loop's next pass.
    let up = refresher.redisUp();
    if (up) {
      try {
        up = (await within(ctx.redis.ping(), PROBE_TIMEOUT_MS, 'Redis')) === 'PONG';
      } catch {
        up = false;
      }
    }
    ctx.metrics.redisUp.set(up ? 1 : 0);
    const age = refresher.ageSeconds();
    if (age !== null) ctx.metrics.redisMetricsAge.set(age);
    if (options.workers) ctx.metrics.processWorkersRunning.set(options.workers.isRunning() ? 1 : 0);
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

/**
 * Whether an Authorization header carries `token` as a bearer token (compared in constant time, on digests so
 * the lengths do not show); everything passes when no token is set.
 */
function bearerCheck(token: string | null): (authorization: string | undefined) => boolean {
  if (token === null) return () => true;
  const expected = createHash('sha256').update(token).digest();
  return (authorization) => {
    const presented = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
    if (presented === undefined) return false;
    return timingSafeEqual(createHash('sha256').update(presented).digest(), expected);
  };
}
