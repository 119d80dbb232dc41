import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppContext, createAppContext } from '../src/app/context.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { crmKind } from '../src/providers.js';
import { closeRedis, createRedis, deleteByPattern, waitForRedis } from '../src/redis.js';
import { createServerApp } from '../src/server/app.js';
import { type LoopbackServer, listenOnLoopback } from './support/loopback-server.js';
import { REDIS_URL } from './support/redis-url.js';
import { waitFor } from './support/wait.js';

/**
 * The probes of a server with no worker anywhere, on the real Redis: `/readyz` answers 200 while Redis does
 * (a server queues webhooks without workers), missing workers show on `/metrics` and the admin page, a scrape
 * sends Redis nothing (the gauges are read by one loop, not per request, so nothing per installation and no
 * scan of clients), and METRICS_TOKEN puts `/metrics` behind a bearer token.
 */

const prefix = `rc-test-probes-${randomUUID().slice(0, 8)}`;
const ADMIN = 'an-admin-token-for-the-probe-tests';
const METRICS = 'a-metrics-token-for-the-probe-tests';
const INSTALLATIONS = 30;

const redis = createRedis(REDIS_URL, 'producer');
const contexts: AppContext[] = [];
const servers: LoopbackServer[] = [];

function context(extra: Record<string, string> = {}): AppContext {
  const config = loadConfig(
    {
      REDIS_URL,
      REDIS_PREFIX: prefix,
      REPORTS_API_URL: 'http://127.0.0.1:9/api',
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      ADMIN_TOKEN: ADMIN,
      ...extra,
    },
    { envFile: null },
  );
  const ctx = createAppContext(config, { logger: createLogger('silent') });
  contexts.push(ctx);
  return ctx;
}

async function serve(ctx: AppContext): Promise<string> {
  // The loop's own passes are a minute apart: none falls inside a measurement below.
  const server = await listenOnLoopback(createServerApp(ctx, { metricsRefreshMs: 60_000 }));
  servers.push(server);
  return server.url;
}

let ctx: AppContext;
let base: string;

beforeAll(async () => {
  await waitForRedis(redis);
  ctx = context();
  await waitForRedis(ctx.redis);
  for (let i = 0; i < INSTALLATIONS; i++) {
    await ctx.installations.upsert({
      crm: crmKind('hubspot'),
      externalId: `probe-${i}`,
      mode: 'oauth',
      tokens: { accessToken: 'unused' },
    });
  }
  base = await serve(ctx);
  // The first pass has read the installations.
  await waitFor(
    'the metrics loop to have read Redis',
    async () => {
      const text = await (await fetch(`${base}/metrics`)).text();
      return text.includes('report_connector_redis_up 1') &&
        text.includes(`report_connector_installations{crm="hubspot",status="pending"} ${INSTALLATIONS}`)
        ? true
        : undefined;
    },
    10_000,
  );
}, 60_000);

afterAll(async () => {
  for (const s of servers) await s.close();
  for (const c of contexts) await c.close();
  await deleteByPattern(redis, `${prefix}*`);
  await closeRedis(redis);
});

describe('/readyz', () => {
  it('is 200 with Redis up and no worker attached anywhere', async () => {
    const res = await fetch(`${base}/readyz`);
    expect(await res.json()).toEqual({ ready: true, checks: { redis: true } });
    expect(res.status).toBe(200);
  });
});

describe('missing workers', () => {
  it('show on /metrics and on the admin page, as the loop last read them', async () => {
    const text = await (await fetch(`${base}/metrics`)).text();
    for (const queue of ['backfill', 'realtime', 'schedule']) {
      expect(text).toContain(`report_connector_workers{queue="${queue}"} 0`);
    }
    expect(text).toMatch(/report_connector_redis_metrics_age_seconds \d/);
    const page = await fetch(`${base}/admin`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(
      'No worker is attached to the backfill, realtime, schedule queues: syncs and report updates wait there',
    );
  });
});

describe('a scrape sends Redis nothing', () => {
  it('50 scrapes and 50 readiness probes: no command names a key of this deployment', async () => {
    const monitor = await redis.monitor();
    const seen: string[][] = [];
    monitor.on('monitor', (_time: string, args: string[]) => {
      seen.push(args);
    });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 50; i++) {
        const [metrics, ready] = await Promise.all([fetch(`${base}/metrics`), fetch(`${base}/readyz`)]);
        await Promise.all([metrics.arrayBuffer(), ready.arrayBuffer()]);
        statuses.push(metrics.status, ready.status);
      }
      // A marker after the scrapes: once MONITOR has shown it, it has shown everything sent before.
      const marker = `${prefix}:marker:${randomUUID()}`;
      await redis.get(marker);
      await waitFor('MONITOR to show the marker', async () =>
        seen.some((args) => args.includes(marker)) ? true : undefined,
      );
      const ours = seen.filter((args) => args.some((a) => a.includes(prefix)) && !args.includes(marker));
      expect(ours.map((args) => args.slice(0, 2).join(' '))).toEqual([]);
      expect(seen.filter((args) => /^client$/i.test(args[0] ?? '') && /^list$/i.test(args[1] ?? ''))).toEqual(
        [],
      );
      expect(new Set(statuses)).toEqual(new Set([200]));
    } finally {
      monitor.disconnect();
    }
  });
});

describe('METRICS_TOKEN', () => {
  it('puts /metrics behind a bearer token; the other probes stay open', async () => {
    const other = context({ METRICS_TOKEN: METRICS });
    await waitForRedis(other.redis);
    const guarded = await serve(other);
    const without = await fetch(`${guarded}/metrics`);
    expect(without.status).toBe(401);
    expect(without.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(await without.json()).toMatchObject({ code: 'UNAUTHENTICATED' });
    const wrong = await fetch(`${guarded}/metrics`, { headers: { authorization: `Bearer ${METRICS}-x` } });
    expect(wrong.status).toBe(401);
    await wrong.arrayBuffer();
    const right = await fetch(`${guarded}/metrics`, { headers: { authorization: `Bearer ${METRICS}` } });
    expect(right.status).toBe(200);
    expect(await right.text()).toContain('report_connector_redis_up');
    expect((await fetch(`${guarded}/readyz`)).status).toBe(200);
    expect((await fetch(`${guarded}/healthz`)).status).toBe(200);
  });
});
