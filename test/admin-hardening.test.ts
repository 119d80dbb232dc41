import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LocalSystem } from '../local/system.js';
import { deleteByPattern } from '../src/redis.js';
import { createServerApp } from '../src/server/app.js';
import type { RunSummary } from '../src/storage/runs.js';
import { startTestSystem, stopTestSystem } from './support/local-system.js';
import { type LoopbackServer, listenOnLoopback } from './support/loopback-server.js';
import { nextRunEnded } from './support/system-state.js';

/**
 * Issue 16 through the real server: one throttle for every way of presenting the admin token (point 3), the
 * lockout keyed by the real client address unless TRUST_PROXY says otherwise (point 7), and a slug that could
 * leave the reports path never reaching the report service (point 5).
 */

let system: LocalSystem;
let token: string;
/** The same context served with TRUST_PROXY=loopback, as behind a proxy on this host. */
let proxied: LoopbackServer;

/** The newest run once it is another than `after` and has ended. */
function runFinished(after?: string): Promise<RunSummary> {
  return nextRunEnded(system, after);
}

beforeAll(async () => {
  system = await startTestSystem({ companies: 40, logLevel: 'silent' });
  token = system.ctx.config.adminToken;
  await runFinished();
  const { config } = system.ctx;
  const ctx = {
    ...system.ctx,
    config: {
      ...config,
      trustProxy: ['loopback'],
      // Salesforce's install route too (the system's CRM is HubSpot): the route needs only the app's keys.
      salesforce: {
        ...config.salesforce,
        clientId: 'test-consumer-key',
        clientSecret: 'test-consumer-secret',
      },
    },
  };
  proxied = await listenOnLoopback(createServerApp(ctx));
}, 180_000);

afterAll(async () => {
  await proxied?.close();
  await stopTestSystem(system);
});

beforeEach(async () => {
  // Each test starts with no failures counted against any address.
  await deleteByPattern(system.ctx.redis, `${system.ctx.config.redisPrefix}:admin:*`);
});

const bearerGet = (value: string, headers: Record<string, string> = {}, base = system.appUrl) =>
  fetch(`${base}/admin/api/installations`, { headers: { authorization: `Bearer ${value}`, ...headers } });

const formLogin = (value: string, headers: Record<string, string> = {}, base = system.appUrl) =>
  fetch(`${base}/admin/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams({ token: value }),
    redirect: 'manual',
  });

describe('one throttle for every way of presenting the admin token (point 3)', () => {
  it('counts wrong bearer tokens: the 11th guess and then the right token answer 429', async () => {
    const guesses: number[] = [];
    for (let i = 0; i < 10; i++) guesses.push((await bearerGet(`${token}-${i}`)).status);
    const eleventh = await bearerGet(`${token}-x`);
    const right = await bearerGet(token);
    expect(guesses).toEqual(Array(10).fill(401));
    expect(eleventh.status).toBe(429);
    expect(right.status).toBe(429);
    expect(await right.json()).toMatchObject({ code: 'TOO_MANY_ATTEMPTS' });
    expect(right.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('shares the count between form, bearer and forged cookies, on the API, the page and the queue board', async () => {
    for (let i = 0; i < 4; i++) expect((await formLogin(`wrong-${i}`)).status).toBe(401);
    for (let i = 0; i < 3; i++) expect((await bearerGet(`wrong-${i}`)).status).toBe(401);
    for (let i = 0; i < 3; i++) {
      const forged = await fetch(`${system.appUrl}/admin/api/installations`, {
        headers: { cookie: `rc_admin_session=v1.${'A'.repeat(24)}.zzzzzz.forged${i}` },
      });
      expect(forged.status).toBe(401);
    }
    // Ten failures in all, by three means: every way in is now closed to this address.
    expect((await formLogin(token)).status).toBe(429);
    expect((await bearerGet(token)).status).toBe(429);
    const board = await fetch(`${system.appUrl}/admin/queues/api/queues`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(board.status).toBe(429);
  });

  it('a session opened before the lockout keeps working: it is not a guess', async () => {
    const login = await formLogin(token);
    expect(login.status).toBe(303);
    const cookie = login.headers
      .getSetCookie()
      .find((c) => c.startsWith('rc_admin_session='))!
      .split(';')[0]!;
    for (let i = 0; i < 10; i++) await bearerGet(`wrong-${i}`);
    expect((await bearerGet(token)).status).toBe(429);
    const withSession = await fetch(`${system.appUrl}/admin/api/installations`, { headers: { cookie } });
    expect(withSession.status).toBe(200);
  });
});

describe('the lockout follows the real client address (point 7)', () => {
  it('by default X-Forwarded-For is not believed: changing it does not reset the lockout', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      statuses.push((await formLogin('wrong', { 'x-forwarded-for': `198.51.100.${i + 1}` })).status);
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses[10]).toBe(429);
    expect((await bearerGet(token, { 'x-forwarded-for': '198.51.100.200' })).status).toBe(429);
  });

  it('with TRUST_PROXY=loopback the forwarded address is the client: one is locked, another is not', async () => {
    const from = (ip: string) => ({ 'x-forwarded-for': ip });
    for (let i = 0; i < 10; i++) await formLogin('wrong', from('203.0.113.5'), proxied.url);
    expect((await formLogin(token, from('203.0.113.5'), proxied.url)).status).toBe(429);
    expect((await bearerGet(token, from('203.0.113.5'), proxied.url)).status).toBe(429);
    expect((await bearerGet(token, from('203.0.113.6'), proxied.url)).status).toBe(200);
    expect((await formLogin(token, from('203.0.113.6'), proxied.url)).status).toBe(303);
  });
});

describe('a slug that could leave the reports path (point 5)', () => {
  it('a CRM user setting report_slug to ".." gets an error status with the reason; the key goes nowhere', async () => {
    const recordId = system.recordIds[0]!;
    await system.hubspot.setCompanyProperty(recordId, 'report_slug', '..');
    const before = (await system.ctx.runs.recent(system.installationId, 1))[0]?.id;
    const sync = await fetch(`${system.appUrl}/admin/api/installations/${system.installationId}/sync`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ full: true }),
    });
    expect(sync.status).toBe(202);
    const run = await runFinished(before);
    const company = system.hubspot.getCompany(recordId)!;
    expect(company.properties.report_match_status).toBe('error');
    expect(company.properties.report_slug).toBe('..');
    const errors = run.errors.filter((e) => e.recordId === recordId);
    expect(errors).toEqual([
      expect.objectContaining({ code: 'INVALID_SLUG', message: expect.stringMatching(/slug/) }),
    ]);
  });

  it('the admin API answers 400 to a hand-set slug of ".." or "."', async () => {
    for (const slug of ['..', '.']) {
      const res = await fetch(
        `${system.appUrl}/admin/api/installations/${system.installationId}/review/${system.recordIds[1]}`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ action: 'set', slug }),
        },
      );
      expect(res.status, slug).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'BAD_REQUEST' });
    }
  });
});

describe('anonymous install requests cost no Redis (point 2)', () => {
  /** The connector's own keys, without the queues' (workers touch those on their own schedule). */
  async function connectorKeys(): Promise<string[]> {
    const prefix = system.ctx.config.redisPrefix;
    const queues = system.ctx.queues.all().map((q) => `${q.qualifiedName}:`);
    const keys = await system.ctx.redis.keys(`${prefix}:*`);
    return keys.filter((k) => !queues.some((q) => k.startsWith(q))).sort();
  }

  it('300 installs on each CRM from 300 addresses all start and leave no key behind', async () => {
    const before = await connectorKeys();
    const statuses = new Map<number, number>();
    for (const crm of ['hubspot', 'salesforce']) {
      for (let i = 0; i < 300; i++) {
        // Behind the proxy each request comes from its own client: the per-address limit is not what stops them.
        const res = await fetch(`${proxied.url}/oauth/${crm}/install`, {
          redirect: 'manual',
          headers: { 'x-forwarded-for': `10.1.${Math.floor(i / 250)}.${i % 250}` },
        });
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        expect(
          res.headers.getSetCookie().some((c) => c.startsWith(`rc_oauth_${crm}=`)),
          `${crm} ${res.status}`,
        ).toBe(true);
      }
    }
    expect(Object.fromEntries(statuses)).toEqual({ 302: 600 });
    expect(await connectorKeys()).toEqual(before);
  });
});

describe('per-address limits on the unauthenticated routes (point 2, in part)', () => {
  it('install requests past 30 a minute and webhooks past 60 refusals a minute answer 429', async () => {
    const served = await listenOnLoopback(createServerApp(system.ctx));
    try {
      const base = served.url;
      const installs: number[] = [];
      for (let i = 0; i < 35; i++) {
        installs.push((await fetch(`${base}/oauth/hubspot/install`, { redirect: 'manual' })).status);
      }
      expect(installs.slice(0, 30)).toEqual(Array(30).fill(302));
      expect(installs.slice(30)).toEqual(Array(5).fill(429));
      const hooks: number[] = [];
      for (let i = 0; i < 65; i++) {
        const res = await fetch(`${base}/webhooks/reports`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"type":"score.changed"}',
        });
        hooks.push(res.status);
      }
      expect(hooks.slice(0, 60)).toEqual(Array(60).fill(401));
      expect(hooks.slice(60)).toEqual(Array(5).fill(429));
    } finally {
      await served.close();
    }
  });
});

describe('the public login page shows no text from its URL', () => {
  /** What the page shows: its text outside tags (the form's hidden `next` field carries the URL back, unshown). */
  const loginText = async (query: string) => {
    const res = await fetch(`${system.appUrl}/admin?${query}`);
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toContain('name="token"');
    return page.replace(/<[^>]*>/g, ' ');
  };
  const bait = 'Your account is suspended: call +1 555 0100 now';

  it('installed=<text> that names no installation shows nothing of it', async () => {
    for (const query of [
      `installed=${encodeURIComponent(bait)}`,
      `installed=${encodeURIComponent(bait)}&reconnected=1`,
      'installed=hubspot-Call_555_0100_to_restore_access',
    ]) {
      const page = await loginText(query);
      expect(page, query).toContain('Admin token');
      expect(page, query).not.toContain('The app is');
      expect(page, query).not.toContain('installation');
      expect(page, query).not.toContain('Call_555');
      expect(page, query).not.toContain('suspended');
      expect(page, query).not.toContain('555 0100');
    }
  });

  it('a known installation id shows the fixed notice, without the id', async () => {
    const page = await loginText(`installed=${system.installationId}&reconnected=1`);
    expect(page).toContain('The app is reconnected: nothing more is needed in the CRM');
    const installed = await loginText(`installed=${system.installationId}`);
    expect(installed).toContain('The app is installed and connected: nothing more is needed in the CRM');
    expect(installed).toContain('ADMIN_TOKEN');
    expect(installed).not.toContain(system.installationId);
  });
});
