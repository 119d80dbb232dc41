import { createHash, timingSafeEqual } from 'node:crypto';
import type { Express, RequestHandler } from 'express';
import type { AppContext } from '../app/context.js';
import { metricsRefresherFor } from '../app/metrics-refresher.js';
import type { PipelineWorkers } from '../pipeline/workers.js';
import { redisReady, within } from '../redis-availability.js';

/** Health, readiness and metrics answer within 2 s: this leaves room for the rest of the request. */
export const PROBE_TIMEOUT_MS = 1_500;

/** `/healthz`, `/readyz` and `/metrics`. */
export function mountProbes(
  app: Express,
  ctx: AppContext,
  options: { workers?: PipelineWorkers; metricsRefreshMs?: number },
): void {
  app.get('/healthz', (_req, res) => {
    res.json({ ok: true });
  });
  app.get('/readyz', readiness(ctx));
  app.get('/metrics', metricsScrape(ctx, options));
}

/**
 * Readiness is whether this server can do its job: queue what arrives, which needs Redis and nothing else.
 * Workers (here or in other processes) show on /metrics and the admin page; a server whose workers are down
 * still takes webhooks, and a load balancer must keep sending them. The probe answers within
 * PROBE_TIMEOUT_MS whatever Redis does: a lost connection is seen from its status at once, a hung one by a
 * short race, and queued commands are never left waiting on a reconnect. One PING, nothing else.
 */
function readiness(ctx: AppContext): RequestHandler {
  return async (_req, res) => {
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
  };
}

/** Serves what the refresher's one loop last read from Redis: a scrape itself sends Redis nothing. */
function metricsScrape(
  ctx: AppContext,
  options: { workers?: PipelineWorkers; metricsRefreshMs?: number },
): RequestHandler {
  const refresher = metricsRefresherFor(ctx, options.metricsRefreshMs);
  refresher.start();
  const metricsAllowed = bearerCheck(ctx.config.metricsToken);
  return async (req, res) => {
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
