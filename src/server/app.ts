import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import helmet from 'helmet';
import proxyaddr from 'proxy-addr';
import { createAdminRouter } from '../admin/router.js';
import { adminPageHeaders } from '../admin/security-headers.js';
import type { AdminLink } from '../admin/views/dashboard.js';
import { oauthResultPage } from '../admin/views/oauth-result.js';
import type { AppContext } from '../app/context.js';
import { InstallationService } from '../app/installation-service.js';
import { kickScoreChanges } from '../pipeline/score-changes/updates.js';
import type { PipelineWorkers } from '../pipeline/workers.js';
import {
  isRedisUnavailable,
  REDIS_UNAVAILABLE_CODE,
  REDIS_UNAVAILABLE_MESSAGE,
} from '../redis-availability.js';
import { createReportWebhookRouter } from '../webhooks/report-route.js';
import {
  AddressWindow,
  limitRefusals,
  limitRequests,
  OAUTH_REQUESTS_PER_MINUTE,
  WEBHOOK_REFUSALS_PER_MINUTE,
} from './address-limits.js';
import { mountCrmRoutes } from './crm-routes.js';
import { mountProbes } from './probes.js';
import { createPublicPagesRouter } from './public-pages.js';
import { DeadlineReportWebhookHandler } from './webhook-deadline.js';
import { headersSetBy, takesRequest, WebhookFastPath } from './webhook-fast-path.js';

/**
 * The HTTP server: health, metrics, OAuth installs, inbound webhooks and the admin page. It only enqueues;
 * the work happens on the queue, in this process (`start`) or in `worker` processes.
 */

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
  const securityHeaders = strictSecurityHeaders(ctx.config.appUrl);
  app.use(securityHeaders);
  app.use('/oauth', adminPageHeaders(ctx.config.appUrl.startsWith('https:')));
  mountProbes(app, ctx, options);
  const webhookRefusals = mountAddressLimits(app);
  const reportWebhooks = mountReportWebhooks(app, ctx);
  app.use(createPublicPagesRouter(ctx.config.appUrl));
  mountCrmRoutes(app, ctx, service);
  app.use(createAdminRouter(ctx, service, options.adminLinks ?? []));
  mountFallbacks(app, ctx);

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
 * Every answer gets strict security headers; the admin router sets its own, looser where its page needs it,
 * and so do the OAuth result pages, which load the admin's stylesheet and script.
 */
function strictSecurityHeaders(appUrl: string) {
  return helmet({
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
    strictTransportSecurity: appUrl.startsWith('https:') ? { maxAge: 180 * 24 * 3600 } : false,
  });
}

/**
 * Anyone may call OAuth installs and webhooks without credentials: per-address limits in memory keep a flood
 * cheap. Returns the webhooks' window of refusals, which the fast path counts into as well.
 */
function mountAddressLimits(app: Express): AddressWindow {
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
  return webhookRefusals;
}

/** The report service's webhooks; returns their handler, which the fast path shares. */
function mountReportWebhooks(app: Express, ctx: AppContext): DeadlineReportWebhookHandler {
  const { config } = ctx;
  const reportWebhooks = new DeadlineReportWebhookHandler({
    events: ctx.events,
    scheme: config.reports.webhookScheme,
    secrets: config.reports.webhookSecrets,
    hexHeader: config.reports.webhookHeader,
    enqueue: (event) => ctx.pipeline.enqueueReportEvent(event),
    inbox: ctx.inbox,
    kickScoreChanges: () => kickScoreChanges(ctx.queues),
    logger: ctx.logger,
    metrics: ctx.metrics,
  });
  app.use(createReportWebhookRouter(reportWebhooks));
  return reportWebhooks;
}

/** What no route took: a 404, and the errors routes passed on (503 while Redis is unreachable). */
function mountFallbacks(app: Express, ctx: AppContext): void {
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
}
