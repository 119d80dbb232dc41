import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { createAdminRouter } from '../admin/router.js';
import type { AppContext } from '../app/context.js';
import { InstallationService } from '../app/installation-service.js';
import { installationId } from '../installations/store.js';
import type { PipelineWorkers } from '../pipeline/workers.js';
import { providers } from '../providers.js';
import { createReportWebhookRouter } from '../webhooks/report-route.js';

/**
 * The HTTP server: health, metrics, OAuth installs, inbound webhooks and the admin page. It only enqueues;
 * the work happens on the queue, in this process (`start`) or in `worker` processes.
 */

export interface ServerOptions {
  /** Workers running in this process, if any (`start`); readiness then requires them. */
  workers?: PipelineWorkers;
}

export function createServerApp(ctx: AppContext, options: ServerOptions = {}): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', 'loopback');
  const service = new InstallationService(ctx);
  const { config } = ctx;

  app.get('/healthz', (_req, res) => {
    res.json({ ok: true });
  });

  app.get('/readyz', async (_req, res) => {
    const checks: Record<string, boolean | string> = {};
    try {
      checks.redis = (await ctx.redis.ping()) === 'PONG';
    } catch (err) {
      checks.redis = false;
      checks.redisError = (err as Error).message;
    }
    if (options.workers) checks.workers = options.workers.isRunning();
    else {
      try {
        const counts = await Promise.all(ctx.queues.all().map((q) => q.getWorkersCount()));
        checks.workers = counts.every((c) => c > 0);
      } catch {
        checks.workers = false;
      }
    }
    const ready = checks.redis === true && checks.workers === true;
    res.status(ready ? 200 : 503).json({ ready, checks });
  });

  app.get('/metrics', async (_req, res) => {
    try {
      const counts = await ctx.queues.counts();
      for (const [queue, c] of Object.entries(counts)) {
        for (const [state, n] of Object.entries(c)) ctx.metrics.jobs.set({ queue, state }, n);
      }
    } catch {
      // Redis is away: the metrics of this process are still worth serving.
    }
    res.type(ctx.metrics.registry.contentType).send(await ctx.metrics.registry.metrics());
  });

  app.use(
    createReportWebhookRouter({
      events: ctx.events,
      scheme: config.reports.webhookScheme,
      secrets: config.reports.webhookSecrets,
      hexHeader: config.reports.webhookHeader,
      enqueue: (event) => ctx.pipeline.enqueueReportEvent(event),
      logger: ctx.logger,
      metrics: ctx.metrics,
    }),
  );

  // Each CRM's OAuth install and callback, and its inbound webhooks, as far as they are configured.
  for (const provider of providers) {
    const routers = provider.routes(config, {
      states: ctx.states,
      installations: ctx.installations,
      logger: ctx.logger,
      installed: async (installation) => {
        await service.installed(installation);
      },
      crmChanged: async (externalId, changes) => {
        const id = installationId(provider.kind, externalId);
        const installation = await ctx.installations.get(id);
        ctx.metrics.webhookEvents.inc(
          { source: provider.kind, outcome: installation ? 'accepted' : 'unknown_portal' },
          changes.length,
        );
        if (installation?.status !== 'connected') return;
        await ctx.pipeline.enqueueCrmChanges(id, changes);
      },
    });
    for (const router of routers) app.use(router);
  }

  app.use(createAdminRouter(ctx, service));

  app.use((_req, res) => {
    res.status(404).json({ error: 'not found' });
  });
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    ctx.logger.error({ err }, 'request failed');
    if (res.headersSent) return;
    const status = (err as { status?: number }).status;
    res.status(status && status >= 400 && status < 600 ? status : 500).json({ error: 'internal error' });
  });
  return app;
}
