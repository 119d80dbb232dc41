import { randomBytes, randomUUID } from 'node:crypto';
import express from 'express';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SalesforceConnectionStore } from '../connectors/salesforce/connections/connections.js';
import { salesforceProvider } from '../connectors/salesforce/index.js';
import { createLocalSalesforce, type LocalSalesforce } from '../connectors/salesforce/local/index.js';
import { revokeSalesforceInstall } from '../connectors/salesforce/oauth/revoke.js';
import { createSalesforceTokenRefresher } from '../connectors/salesforce/oauth/token-refresher.js';
import { connectionOf } from '../src/admin/overview.js';
import { providerStorage } from '../src/app/stores.js';
import { OAuthStateStore } from '../src/auth/oauth-state.js';
import { TokenManager } from '../src/auth/token-manager.js';
import type { Config } from '../src/config.js';
import { CrmDisconnectedError } from '../src/crm/errors.js';
import { type Installation, InstallationStore } from '../src/installations/store.js';
import { createLogger } from '../src/log.js';
import { closeRedis, createRedis, waitForRedis } from '../src/redis.js';
import { Keys } from '../src/storage/keys.js';
import { SecretBox } from '../src/util/secretbox.js';
import { CookieJar } from './support/cookie-jar.js';
import { type LoopbackServer, listenOnLoopback } from './support/loopback-server.js';
import { REDIS_URL } from './support/redis-url.js';
import { connectionAndOAuthRoutes, localSalesforceConfig } from './support/salesforce-config.js';

/**
 * Many orgs: each org's External Client App is a Salesforce connection the operator creates; its install link
 * names it, and the callback, refresh and revoke use its consumer key and secret. Two local Salesforce orgs with
 * different client ids stand for two customers' orgs; the deployment has no global app at all.
 */

let redis: Redis;
let prefix: string;
let appServer: LoopbackServer;
let appUrl: string;
let store: InstallationStore;
let connections: SalesforceConnectionStore;
let orgs: { local: LocalSalesforce; url: string; close(): Promise<void> }[];
let config: Pick<Config, 'appUrl' | 'salesforce'>;
let browser: CookieJar;
let current: express.RequestHandler = (_req, _res, next) => next();
const logger = createLogger('silent');

beforeAll(async () => {
  redis = createRedis(REDIS_URL, 'producer', 'salesforce-connections-test');
  await waitForRedis(redis);
  const app = express();
  app.use((req, res, next) => current(req, res, next));
  appServer = await listenOnLoopback(app);
  appUrl = appServer.url;
});

beforeEach(async () => {
  prefix = `rc-test-${randomUUID()}`;
  const callbackUrls = [`${appUrl}/oauth/salesforce/callback`];
  orgs = [];
  for (const [name, orgId] of [
    ['a', '00D5g00000000AAEAY'],
    ['b', '00D5g00000000BBEAY'],
  ] as const) {
    const local = createLocalSalesforce({
      orgId,
      clientId: `client-${name}-${randomUUID()}`,
      clientSecret: `secret-${name}-${randomUUID()}`,
      callbackUrls,
    });
    orgs.push({ local, ...(await local.listen()) });
  }
  const key = randomBytes(32);
  const box = new SecretBox(key);
  store = new InstallationStore(redis, box, prefix);
  connections = new SalesforceConnectionStore(redis, box, new Keys(prefix));
  const states = new OAuthStateStore(key, { secureCookies: false });
  browser = new CookieJar();
  const base = localSalesforceConfig(appUrl, orgs[0]!.local, orgs[0]!.url);
  // No global app: every install here goes through a connection.
  config = { appUrl, salesforce: { ...base.salesforce, clientId: undefined, clientSecret: undefined } };
  current = connectionAndOAuthRoutes({ config, states, store, connections, logger });
});

afterEach(async () => {
  await Promise.all(orgs.map((o) => o.close()));
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
});

afterAll(async () => {
  await appServer.close();
  await closeRedis(redis);
});

async function createConnection(org: { local: LocalSalesforce; url: string }, label: string) {
  const res = await fetch(`${appUrl}/admin/api/salesforce/connections`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      label,
      consumerKey: org.local.org.clientId,
      consumerSecret: org.local.org.clientSecret,
      loginUrl: org.url,
    }),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { connection: { id: string }; installLink: string };
}

/** The org's admin opens the install link, approves at Salesforce, and lands on the callback. */
async function installThrough(link: string, org: { local: LocalSalesforce; url: string }): Promise<URL> {
  const install = await browser.fetch(link);
  expect(install.status).toBe(302);
  const authorize = new URL(install.headers.get('location')!);
  expect(`${authorize.origin}${authorize.pathname}`).toBe(`${org.url}/services/oauth2/authorize`);
  const consent = await browser.fetch(authorize.toString());
  expect(consent.status).toBe(302);
  const done = await browser.fetch(consent.headers.get('location')!);
  expect(done.status).toBe(200);
  expect(await done.text()).toContain('Salesforce is connected');
  return authorize;
}

describe('Salesforce connections', () => {
  it('installs two orgs through two connections, and each refreshes with its own app', async () => {
    const [a, b] = [orgs[0]!, orgs[1]!];
    const ca = await createConnection(a, 'Org A');
    const cb = await createConnection(b, 'Org B');
    expect(ca.installLink).toBe(`${appUrl}/oauth/salesforce/install?connection=${ca.connection.id}`);

    const authorizeA = await installThrough(ca.installLink, a);
    const authorizeB = await installThrough(cb.installLink, b);
    expect(authorizeA.searchParams.get('client_id')).toBe(a.local.org.clientId);
    expect(authorizeB.searchParams.get('client_id')).toBe(b.local.org.clientId);

    const installations = await store.list();
    const byOrg = (org: LocalSalesforce) => installations.find((i) => i.externalId === org.orgId)!;
    const instA = byOrg(a.local);
    const instB = byOrg(b.local);
    expect(instA.connectionId).toBe(ca.connection.id);
    expect(instB.connectionId).toBe(cb.connection.id);

    // Each org's access token dies; each installation refreshes at its own org with its own app (an org
    // refuses another app's consumer key with invalid_client).
    const manager = new TokenManager(store, redis, {
      salesforce: createSalesforceTokenRefresher(config, connections),
    });
    for (const [org, inst] of [
      [a, instA],
      [b, instB],
    ] as const) {
      const before = (await store.getTokens(inst.id))!;
      org.local.expireAccessTokens();
      org.local.resetCounters();
      const fresh = await manager.refresh(inst.id, before.accessToken);
      expect(org.local.org.sessionUser(fresh)).toBe(org.local.integrationUserId);
      expect(org.local.counters()['oauth.token']).toBe(1);
      const after = (await store.getTokens(inst.id))!;
      // The org rotates refresh tokens: the new one was kept.
      expect(after.refreshToken).not.toBe(before.refreshToken);
      expect((await store.get(inst.id))?.status).toBe('connected');
    }
  });

  it('refuses an install link naming a connection that does not exist', async () => {
    const res = await browser.fetch(`${appUrl}/oauth/salesforce/install?connection=sfc_AAAAAAAAAAAAAAAA`);
    expect(res.status).toBe(404);
    expect(await res.text()).toContain('does not exist');
    const malformed = await browser.fetch(`${appUrl}/oauth/salesforce/install?connection=nope`);
    expect(malformed.status).toBe(404);
  });

  it('without a global app or a connection, the plain install link says what to configure', async () => {
    const res = await browser.fetch(`${appUrl}/oauth/salesforce/install`);
    expect(res.status).toBe(503);
    expect(await res.text()).toContain('SALESFORCE_CLIENT_ID');
  });

  it('keeps the consumer secret sealed and never lists it', async () => {
    const a = orgs[0]!;
    const { connection } = await createConnection(a, 'Org A');
    const listed = await fetch(`${appUrl}/admin/api/salesforce/connections`);
    const text = await listed.text();
    expect(text).toContain(connection.id);
    expect(text).not.toContain(a.local.org.clientSecret);
    const keys = await redis.keys(`${prefix}:*`);
    for (const key of keys) {
      const type = await redis.type(key);
      const values = type === 'hash' ? Object.values(await redis.hgetall(key)) : await redis.smembers(key);
      expect(values.join(' ')).not.toContain(a.local.org.clientSecret);
    }
    expect((await connections.credentials(connection.id)).clientSecret).toBe(a.local.org.clientSecret);
  });

  it('refuses a connection without a secret or with a login URL that is not http(s)', async () => {
    const res = await fetch(`${appUrl}/admin/api/salesforce/connections`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        label: 'x',
        consumerKey: 'k',
        consumerSecret: '',
        loginUrl: 'ftp://example.com',
      }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; issues: string[] };
    expect(body.code).toBe('BAD_REQUEST');
    expect(body.issues.join(' ')).toMatch(/consumerSecret/);
    expect(body.issues.join(' ')).toMatch(/loginUrl/);
    expect(await connections.list()).toEqual([]);
  });

  it('disconnects an installation whose connection was removed, at its next refresh', async () => {
    const a = orgs[0]!;
    const ca = await createConnection(a, 'Org A');
    await installThrough(ca.installLink, a);
    const [inst] = (await store.list()) as [Installation];
    const removed = await fetch(`${appUrl}/admin/api/salesforce/connections/${ca.connection.id}`, {
      method: 'DELETE',
    });
    expect(removed.status).toBe(200);
    const again = await fetch(`${appUrl}/admin/api/salesforce/connections/${ca.connection.id}`, {
      method: 'DELETE',
    });
    expect(again.status).toBe(404);

    const manager = new TokenManager(store, redis, {
      salesforce: createSalesforceTokenRefresher(config, connections),
    });
    const stale = (await store.getTokens(inst.id))!.accessToken;
    await expect(manager.refresh(inst.id, stale)).rejects.toBeInstanceOf(CrmDisconnectedError);
    expect((await store.get(inst.id))?.status).toBe('disconnected');
    expect((await store.get(inst.id))?.statusReason).toMatch(/connection_removed/);
  });

  it("offers to reconnect a disconnected installation through its own connection's link", async () => {
    const a = orgs[0]!;
    const ca = await createConnection(a, 'Org A');
    await installThrough(ca.installLink, a);
    const [inst] = (await store.list()) as [Installation];
    await store.setStatus(inst.id, 'disconnected', 'refused');
    const view = connectionOf((await store.get(inst.id))!);
    expect(view.reconnectUrl).toBe(`/oauth/salesforce/install?connection=${ca.connection.id}`);
  });

  it('revokes at the org it was installed in', async () => {
    const b = orgs[1]!;
    const cb = await createConnection(b, 'Org B');
    await installThrough(cb.installLink, b);
    const [inst] = (await store.list()) as [Installation];
    const tokens = (await store.getTokens(inst.id))!;
    b.local.resetCounters();
    const outcome = await revokeSalesforceInstall(
      config,
      {
        installation: inst,
        tokens,
        accessToken: { current: async () => tokens.accessToken, refreshAfterRejection: async () => '' },
        signal: AbortSignal.timeout(5000),
      },
      connections,
    );
    expect(outcome).toBe('revoked');
    expect(b.local.counters()['oauth.revoke']).toBe(1);
    expect(b.local.org.sessionUser(tokens.accessToken)).toBeNull();
  });

  it('is wired into the provider: routes and refresher exist without a global app', () => {
    const storage = providerStorage(redis, new Keys(prefix), new SecretBox(randomBytes(32)));
    expect(salesforceProvider.tokenRefresher(config, storage)).toBeTypeOf('function');
    expect(salesforceProvider.adminApi?.(config, storage)).toBeTypeOf('function');
  });
});
