import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSystem } from '../local/system.js';
import { startTestSystem, stopTestSystem } from './support/local-system.js';
import { measured } from './support/measured.js';
import { OwnRedisServer } from './support/own-redis.js';
import { waitFor } from './support/wait.js';
import { sharedSecretsEnv } from './support/worker-process.js';

/**
 * Issue 16, point 4: every HTTP answer is bounded in time while Redis is away, killed (connections refused)
 * or hung (SIGSTOP: connections open, nothing answered). Health, readiness and metrics answer within 2 s,
 * readiness 503 (liveness stays 200: the process is fine and reconnects by itself; metrics stay 200 with
 * report_connector_redis_up 0, so the scrape keeps this process's numbers); the admin page and API answer 503
 * with a sentence saying Redis is unreachable, never hang and never 500. Against a Redis of the test's own and the real server.
 */

const redisServer = new OwnRedisServer();
let system: LocalSystem;
let cookie: string;
const BOUND_MS = 2_000;

beforeAll(async () => {
  await redisServer.start();
  system = await startTestSystem({
    redisUrl: redisServer.url,
    companies: 20,
    workers: 1,
    env: sharedSecretsEnv(),
    logLevel: 'silent',
  });
  const login = await fetch(`${system.appUrl}/admin/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: system.ctx.config.adminToken }),
    redirect: 'manual',
  });
  cookie = login.headers
    .getSetCookie()
    .find((c) => c.startsWith('rc_admin_session='))!
    .split(';')[0]!;
  await waitFor(
    'readiness',
    async () => ((await fetch(`${system.appUrl}/readyz`)).ok ? true : undefined),
    30_000,
  );
}, 120_000);

afterAll(async () => {
  redisServer.resume();
  if (!redisServer.running) await redisServer.start();
  await stopTestSystem(system);
  await redisServer.dispose();
});

interface Timed {
  status: number;
  ms: number;
  text: string;
}

/** One request with a generous client-side limit, so a hang shows as a long time, not a stuck test. */
async function timed(path: string, init: RequestInit = {}): Promise<Timed> {
  const started = Date.now();
  try {
    const res = await fetch(`${system.appUrl}${path}`, {
      redirect: 'manual',
      ...init,
      signal: AbortSignal.timeout(20_000),
    });
    const text = await res.text();
    return { status: res.status, ms: Date.now() - started, text };
  } catch {
    return { status: 0, ms: Date.now() - started, text: '' };
  }
}

async function probeEverything(): Promise<Record<string, Timed>> {
  const bearer = { authorization: `Bearer ${system.ctx.config.adminToken}` };
  const json = { ...bearer, 'content-type': 'application/json' };
  const id = system.installationId;
  const entries = await Promise.all(
    Object.entries({
      healthz: () => timed('/healthz'),
      readyz: () => timed('/readyz'),
      metrics: () => timed('/metrics'),
      apiList: () => timed('/admin/api/installations', { headers: bearer }),
      apiSync: () =>
        timed(`/admin/api/installations/${id}/sync`, { method: 'POST', headers: json, body: '{}' }),
      page: () => timed('/admin', { headers: { cookie } }),
      login: () =>
        timed('/admin/login', {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token: 'wrong' }).toString(),
        }),
    }).map(async ([name, probe]) => [name, await probe()] as const),
  );
  return Object.fromEntries(entries);
}

/** Every answer within 2 s, whether the connection is lost (seen at once) or Redis hangs (a timed ping). */
function expectBounded(answers: Record<string, Timed>, boundMs: number): void {
  for (const [name, answer] of Object.entries(answers)) {
    expect(answer.ms, `${name} took ${answer.ms} ms`).toBeLessThan(boundMs);
  }
  expect(answers.healthz!.status).toBe(200);
  expect(answers.readyz!.status).toBe(503);
  expect(answers.metrics!.status).toBe(200);
  expect(answers.metrics!.text).toMatch(/^report_connector_redis_up 0$/m);
  for (const name of ['apiList', 'apiSync', 'page', 'login']) {
    expect(answers[name]!.status, name).toBe(503);
    expect(answers[name]!.text, name).toMatch(/Redis/);
  }
  expect(JSON.parse(answers.apiList!.text)).toMatchObject({ code: 'REDIS_UNAVAILABLE' });
}

describe('answers during a Redis outage', () => {
  it('Redis killed: every probe and admin route answers within 2 s, readiness and admin 503', async () => {
    await redisServer.kill();
    // The connections notice the closed socket at once; probe right away and again a little later.
    const first = await probeEverything();
    const again = await probeEverything();
    measured('outage-killed', {
      first: Object.fromEntries(Object.entries(first).map(([k, v]) => [k, `${v.status} ${v.ms} ms`])),
      again: Object.fromEntries(Object.entries(again).map(([k, v]) => [k, `${v.status} ${v.ms} ms`])),
    });
    expectBounded(first, BOUND_MS);
    expectBounded(again, BOUND_MS);
    await redisServer.start();
    await waitFor(
      'readiness after the restart',
      async () => ((await fetch(`${system.appUrl}/readyz`)).ok ? true : undefined),
      30_000,
    );
    expect(
      (
        await timed('/admin/api/installations', {
          headers: { authorization: `Bearer ${system.ctx.config.adminToken}` },
        })
      ).status,
    ).toBe(200);
  }, 90_000);

  it('Redis hung (SIGSTOP): the same bounds hold, then everything recovers', async () => {
    redisServer.pause();
    const answers = await probeEverything();
    measured(
      'outage-hung',
      Object.fromEntries(Object.entries(answers).map(([k, v]) => [k, `${v.status} ${v.ms} ms`])),
    );
    redisServer.resume();
    expectBounded(answers, BOUND_MS);
    await waitFor(
      'readiness after the resume',
      async () => ((await fetch(`${system.appUrl}/readyz`)).ok ? true : undefined),
      30_000,
    );
  }, 90_000);
});
