import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readSalesforceConfig } from '../connectors/salesforce/config.js';
import { SalesforceConnectionStore } from '../connectors/salesforce/connections/connections.js';
import { createSalesforceConnector } from '../connectors/salesforce/connector.js';
import { createLocalSalesforce, type LocalSalesforce } from '../connectors/salesforce/local/index.js';
import {
  exchangeAuthorizationCode,
  refreshAccessToken,
} from '../connectors/salesforce/oauth/oauth-client.js';
import { revokeSalesforceInstall } from '../connectors/salesforce/oauth/revoke.js';
import { createSalesforceTokenRefresher } from '../connectors/salesforce/oauth/token-refresher.js';
import { SALESFORCE_KIND } from '../connectors/salesforce/provider.js';
import { OAuthStateStore } from '../src/auth/oauth-state.js';
import type { Config } from '../src/config.js';
import { type Installation, InstallationStore } from '../src/installations/store.js';
import { createLogger } from '../src/log.js';
import { closeRedis, createRedis, waitForRedis } from '../src/redis.js';
import { Keys } from '../src/storage/keys.js';
import { SecretBox } from '../src/util/secretbox.js';
import { CookieJar } from './support/cookie-jar.js';
import { openGate } from './support/local-salesforce-connector.js';
import { type LoopbackServer, listenOnLoopback } from './support/loopback-server.js';
import { REDIS_URL } from './support/redis-url.js';
import { connectionAndOAuthRoutes, localSalesforceConfig } from './support/salesforce-config.js';

/**
 * Salesforce hosts are Salesforce's. Two local orgs stand for a victim org and another tenant's org; a loopback
 * server stands for a server a tenant controls and registers as a connection's login URL. The tests run with
 * the development setting that lets loopback hosts through (as every local-org test must), except where they
 * show what a production configuration refuses.
 */

type SalesforceSection = Pick<Config, 'appUrl' | 'salesforce'>;

let redis: Redis;
let prefix: string;
let appServer: Server;
let appUrl: string;
let box: SecretBox;
let store: InstallationStore;
let connections: SalesforceConnectionStore;
let victim: { local: LocalSalesforce; url: string; close(): Promise<void> };
let other: { local: LocalSalesforce; url: string; close(): Promise<void> };
let servers: { close(): Promise<void> }[];
let config: SalesforceSection;
let browser: CookieJar;
let current: express.RequestHandler = (_req, _res, next) => next();
const logger = createLogger('silent');

const VICTIM_ORG = '00D5g00000000VVEAY';
const OTHER_ORG = '00D5g00000000OOEAY';

/** Mounts the admin API's connections and the OAuth routes for `cfg`. */
function mount(cfg: SalesforceSection, key: Buffer): void {
  const states = new OAuthStateStore(key, { secureCookies: false });
  // The deployment's allowlist lets both orgs in at once: the path the review measured.
  current = connectionAndOAuthRoutes({ config: cfg, states, store, connections, logger });
}

beforeAll(async () => {
  redis = createRedis(REDIS_URL, 'producer', 'salesforce-hosts-test');
  await waitForRedis(redis);
  const app = express();
  appServer = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => appServer.once('listening', resolve));
  appUrl = `http://127.0.0.1:${(appServer.address() as AddressInfo).port}`;
  app.use((req, res, next) => current(req, res, next));
});

let key: Buffer;

beforeEach(async () => {
  prefix = `rc-test-${randomUUID()}`;
  servers = [];
  const callbackUrls = [`${appUrl}/oauth/salesforce/callback`];
  const org = async (orgId: string, name: string) => {
    const local = createLocalSalesforce({
      orgId,
      clientId: `client-${name}-${randomUUID()}`,
      clientSecret: `secret-${name}-${randomUUID()}`,
      callbackUrls,
    });
    return { local, ...(await local.listen()) };
  };
  victim = await org(VICTIM_ORG, 'victim');
  other = await org(OTHER_ORG, 'other');
  key = randomBytes(32);
  box = new SecretBox(key);
  store = new InstallationStore(redis, box, prefix);
  connections = new SalesforceConnectionStore(redis, box, new Keys(prefix));
  browser = new CookieJar();
  // The global app is the victim org's own: the victim installs the usual way.
  config = localSalesforceConfig(appUrl, victim.local, victim.url);
  mount(config, key);
});

afterEach(async () => {
  await Promise.all([victim.close(), other.close(), ...servers.map((s) => s.close())]);
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
});

afterAll(async () => {
  await new Promise((resolve) => appServer.close(resolve));
  await closeRedis(redis);
});

async function serve(app: express.Express): Promise<LoopbackServer> {
  const server = await listenOnLoopback(app);
  servers.push(server);
  return server;
}

/** Walks an install link through the authorize step to the callback; returns the callback's answer. */
async function install(link: string): Promise<{ status: number; text: string }> {
  const start = await browser.fetch(link);
  if (start.status !== 302) return { status: start.status, text: await start.text() };
  const consent = await browser.fetch(start.headers.get('location')!);
  expect(consent.status).toBe(302);
  const done = await browser.fetch(consent.headers.get('location')!);
  return { status: done.status, text: await done.text() };
}

async function createConnection(body: Record<string, string>): Promise<Response> {
  return fetch(`${appUrl}/admin/api/salesforce/connections`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ label: 'tenant', consumerKey: 'key', consumerSecret: 'secret', ...body }),
  });
}

/** The victim installs through the global app and is let in. */
async function installVictim(): Promise<Installation> {
  const done = await install(`${appUrl}/oauth/salesforce/install`);
  expect(done.status).toBe(200);
  const installation = (await store.get(`salesforce-${VICTIM_ORG}`))!;
  expect(installation.approvedBy).toBe('allowlist');
  return installation;
}

/**
 * A server a tenant controls, registered as its connection's login URL: it sends the browser straight back
 * with a code and answers the token call with an `id` naming the victim org, signed with the consumer secret the
 * tenant handed over. `idBase` is where that identity URL points: the victim's real identity service, or the
 * tenant's own server (which then answers for the victim too).
 */
async function tenantServer(secret: string, idBase: 'victim' | 'own') {
  const app = express();
  app.use(express.urlencoded({ extended: false }));
  const seen: { identity: number; token: number } = { identity: 0, token: 0 };
  let url = '';
  app.get('/services/oauth2/authorize', (req, res) => {
    const back = new URL(String(req.query.redirect_uri));
    back.searchParams.set('state', String(req.query.state));
    back.searchParams.set('code', 'tenant-code');
    res.redirect(302, back.toString());
  });
  app.post('/services/oauth2/token', (_req, res) => {
    seen.token++;
    const base = idBase === 'victim' ? victim.url : url;
    const id = `${base}/id/${VICTIM_ORG}/${victim.local.integrationUserId}`;
    const issuedAt = String(Date.now());
    res.json({
      access_token: 'tenant-access-token',
      refresh_token: 'tenant-refresh-token',
      instance_url: url,
      id,
      issued_at: issuedAt,
      signature: createHmac('sha256', secret)
        .update(id + issuedAt)
        .digest('base64'),
      token_type: 'Bearer',
    });
  });
  app.get('/id/:org/:user', (req, res) => {
    seen.identity++;
    res.json({ organization_id: req.params.org, user_id: req.params.user, id: `${url}${req.path}` });
  });
  const server = await serve(app);
  url = server.url;
  return { url, seen };
}

describe('the impersonation the review measured', () => {
  it("a tenant's login URL answering with the victim org's id does not take over the victim's installation", async () => {
    const before = await installVictim();
    const tokensBefore = await store.getTokens(before.id);
    const secret = `tenant-secret-${randomUUID()}`;
    const tenant = await tenantServer(secret, 'victim');
    // Created: loopback is let through by the development setting these tests run with.
    const created = await createConnection({ consumerSecret: secret, loginUrl: tenant.url });
    expect(created.status).toBe(201);
    const { installLink } = (await created.json()) as { installLink: string };

    victim.local.resetCounters();
    const done = await install(installLink);
    expect(tenant.seen.token).toBe(1);
    // The victim's installation is as it was: instance URL, connection, approval, status, tokens.
    const after = (await store.get(before.id))!;
    expect(after.instanceUrl).toBe(victim.url);
    expect(after.connectionId).toBeUndefined();
    expect(after.approvedBy).toBe('allowlist');
    expect(after.status).toBe('connected');
    expect(await store.getTokens(before.id)).toEqual(tokensBefore);
    // Salesforce's identity service was asked with the tenant's token, and refused it.
    expect(victim.local.counters().identity).toBe(1);
    expect(done.status).toBe(502);
    expect(done.text).toContain('could not be confirmed');
    // Fixed words only: nothing of the tenant's answer is shown.
    expect(done.text).not.toContain(tenant.url);
  });

  it('a tenant that also answers the identity URL only gets a change held for the operator, the victim keeps its tokens', async () => {
    const before = await installVictim();
    const tokensBefore = await store.getTokens(before.id);
    const secret = `tenant-secret-${randomUUID()}`;
    const tenant = await tenantServer(secret, 'own');
    const created = await createConnection({ consumerSecret: secret, loginUrl: tenant.url });
    expect(created.status).toBe(201);
    const { installLink, connection } = (await created.json()) as {
      installLink: string;
      connection: { id: string };
    };

    const done = await install(installLink);
    // Nothing of the installation was replaced; it waits for an operator, and the allowlist cannot let it in.
    const held = (await store.get(before.id))!;
    expect(held.instanceUrl).toBe(victim.url);
    expect(tenant.seen.identity).toBe(1);
    expect(done.status).toBe(200);
    expect(done.text).not.toContain('Salesforce is connected');
    expect(held.status).toBe('pending');
    expect(held.approvedBy).toBeUndefined();
    expect(held.changeHeldAt).toBeDefined();
    expect(held.instanceUrl).toBe(victim.url);
    expect(held.connectionId).toBeUndefined();
    expect(await store.getTokens(before.id)).toEqual(tokensBefore);
    expect(await store.approve(before.id, 'allowlist')).toBe(false);
    expect(await store.approve(before.id, 'own_key')).toBe(false);

    // An operator who approves applies the change (in production the host check stops this tenant first).
    expect(await store.approve(before.id, 'admin')).toBe(true);
    const approved = (await store.get(before.id))!;
    expect(approved.instanceUrl).toBe(tenant.url);
    expect(approved.connectionId).toBe(connection.id);
    expect(approved.changeHeldAt).toBeUndefined();
    expect((await store.getTokens(before.id))?.accessToken).toBe('tenant-access-token');
  });

  it('with the production setting the same tenant connection is refused at creation, and at the call if stored', async () => {
    await installVictim();
    const production: SalesforceSection = {
      ...config,
      salesforce: { ...config.salesforce, loginUrl: 'https://login.salesforce.com', allowLocalHosts: false },
    };
    mount(production, key);
    const secret = `tenant-secret-${randomUUID()}`;
    const tenant = await tenantServer(secret, 'own');
    const created = await createConnection({ consumerSecret: secret, loginUrl: tenant.url });
    expect(created.status).toBe(400);
    expect(((await created.json()) as { code: string }).code).toBe('SALESFORCE_HOST_NOT_ALLOWED');

    // A connection stored before the check (by an older version) is refused when its link is opened.
    const stored = await connections.create({
      label: 'old',
      consumerKey: 'key',
      consumerSecret: secret,
      loginUrl: tenant.url,
    });
    const start = await browser.fetch(`${appUrl}/oauth/salesforce/install?connection=${stored.id}`);
    expect(start.status).toBe(400);
    expect(await start.text()).toContain('login URL');
    expect(tenant.seen.token).toBe(0);
  });
});

/** What a revoke is handed besides the installation and its tokens; Salesforce's revoke needs neither. */
const revokeExtras = {
  accessToken: { current: async () => 'a', refreshAfterRejection: async () => 'a' },
  signal: new AbortController().signal,
};

const REFUSED = ['http://127.0.0.1:9', 'https://login.attacker.example', 'https://169.254.169.254'];

describe('host check', () => {
  it('refuses the measured login URLs when a connection is created (production setting)', async () => {
    mount({ ...config, salesforce: { ...config.salesforce, allowLocalHosts: false } }, key);
    for (const loginUrl of REFUSED) {
      const res = await createConnection({ loginUrl });
      expect(res.status, loginUrl).toBe(400);
      expect(((await res.json()) as { code: string }).code).toBe('SALESFORCE_HOST_NOT_ALLOWED');
    }
    for (const loginUrl of [
      'https://login.salesforce.com',
      'https://test.salesforce.com',
      'https://acme.my.salesforce.com',
      'https://acme--uat.sandbox.my.salesforce.com',
      'https://agency.my.salesforce.mil',
    ]) {
      expect((await createConnection({ loginUrl })).status, loginUrl).toBe(201);
    }
    for (const loginUrl of [
      'http://acme.my.salesforce.com',
      'https://acme.my.salesforce.com.attacker.example',
      'https://acme.my.salesforce.com:8443',
      'https://user@acme.my.salesforce.com',
    ]) {
      expect((await createConnection({ loginUrl })).status, loginUrl).toBe(400);
    }
    expect(await connections.list()).toHaveLength(5);
  });

  it('lets the operator add hosts (SALESFORCE_EXTRA_HOSTS)', async () => {
    mount(
      {
        ...config,
        salesforce: { ...config.salesforce, allowLocalHosts: false, extraHosts: ['*.sf.example.test'] },
      },
      key,
    );
    expect((await createConnection({ loginUrl: 'https://login.sf.example.test' })).status).toBe(201);
    expect((await createConnection({ loginUrl: 'https://sf.example.test' })).status).toBe(400);
  });

  it('refuses the measured hosts at every call: token, refresh, identity, revoke, the API base', async () => {
    const production = { salesforce: { ...config.salesforce, allowLocalHosts: false } };
    for (const url of REFUSED) {
      const app = { clientId: 'key', clientSecret: 'secret', loginUrl: url };
      await expect(
        exchangeAuthorizationCode(
          app,
          { code: 'c', codeVerifier: 'v', redirectUri: 'r' },
          { extraHosts: [], allowLocalHosts: false },
        ),
        url,
      ).rejects.toMatchObject({ code: 'SALESFORCE_HOST_NOT_ALLOWED' });
      await expect(
        refreshAccessToken(app, { url, role: 'instance URL' }, 'refresh', {
          extraHosts: [],
          allowLocalHosts: false,
        }),
      ).rejects.toMatchObject({ code: 'SALESFORCE_HOST_NOT_ALLOWED' });
      const installation = {
        id: `salesforce-${VICTIM_ORG}`,
        crm: SALESFORCE_KIND,
        externalId: VICTIM_ORG,
        mode: 'oauth',
        status: 'connected',
        instanceUrl: url,
        createdAt: '',
        updatedAt: '',
        hasReportsApiKey: false,
      } as Installation;
      await expect(
        createSalesforceTokenRefresher(production)({ accessToken: 'a', refreshToken: 'r' }, installation),
      ).rejects.toMatchObject({ code: 'REFRESH_REJECTED', providerCode: 'host_not_allowed' });
      await expect(
        revokeSalesforceInstall(production, {
          installation,
          tokens: { accessToken: 'a', refreshToken: 'r' },
          ...revokeExtras,
        }),
      ).rejects.toMatchObject({
        code: 'CRM_REVOCATION_FAILED',
        message: expect.stringContaining('is refused'),
      });
      expect(() =>
        createSalesforceConnector({
          installation,
          tokens: { current: async () => 'a', refreshAfterRejection: async () => 'a' },
          gate: openGate,
          config: production,
        }),
      ).toThrow(/not a Salesforce host|https only/);
      const { confirmIdentity } = await import('../connectors/salesforce/oauth/identity.js');
      await expect(
        confirmIdentity(`${url}/id/${VICTIM_ORG}/005000000000001AAA`, 'a', {
          extraHosts: [],
          allowLocalHosts: false,
        }),
      ).rejects.toMatchObject({ code: 'SALESFORCE_HOST_NOT_ALLOWED' });
    }
  });

  it('refuses the local-org setting with NODE_ENV=production, and a local login URL without it', () => {
    expect(() =>
      readSalesforceConfig({ SALESFORCE_ALLOW_LOCAL_HOSTS: 'true', NODE_ENV: 'production' }),
    ).toThrow(/SALESFORCE_ALLOW_LOCAL_HOSTS/);
    expect(() => readSalesforceConfig({ SALESFORCE_LOGIN_URL: 'http://127.0.0.1:9' })).toThrow(
      /SALESFORCE_LOGIN_URL/,
    );
    expect(() => readSalesforceConfig({ SALESFORCE_LOGIN_URL: 'https://login.attacker.example' })).toThrow(
      /SALESFORCE_LOGIN_URL/,
    );
    expect(
      readSalesforceConfig({
        SALESFORCE_LOGIN_URL: 'http://127.0.0.1:9',
        SALESFORCE_ALLOW_LOCAL_HOSTS: 'true',
      }).loginUrl,
    ).toBe('http://127.0.0.1:9');
    expect(readSalesforceConfig({}).loginUrl).toBe('https://login.salesforce.com');
  });
});

describe('a connection and its org', () => {
  it('is bound to the org of its first install; an install through it for another org is refused', async () => {
    // One External Client App whose keys both orgs accept (a packaged app): the connection names it.
    const shared = { clientId: `shared-${randomUUID()}`, clientSecret: `shared-${randomUUID()}` };
    const callbackUrls = [`${appUrl}/oauth/salesforce/callback`];
    const first = createLocalSalesforce({ orgId: '00D5g00000000F1EAY', ...shared, callbackUrls });
    const second = createLocalSalesforce({ orgId: '00D5g00000000S2EAY', ...shared, callbackUrls });
    const firstServer = await first.listen();
    const secondServer = await second.listen();
    servers.push(firstServer, secondServer);

    const created = await createConnection({
      consumerKey: shared.clientId,
      consumerSecret: shared.clientSecret,
      loginUrl: firstServer.url,
    });
    const { installLink, connection } = (await created.json()) as {
      installLink: string;
      connection: { id: string };
    };
    expect((await install(installLink)).status).toBe(200);
    expect((await store.get('salesforce-00D5g00000000F1EAY'))?.connectionId).toBe(connection.id);

    // The same connection's login URL now leads to the second org (its operator edited nothing: the login
    // host serves both orgs, as login.salesforce.com does).
    await redis.hset(new Keys(prefix).provider('salesforce', 'connection', connection.id), {
      loginUrl: secondServer.url,
    });
    const refused = await install(installLink);
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('belongs to another org');
    expect(await store.get('salesforce-00D5g00000000S2EAY')).toBeNull();
  });
});

describe('an installation whose connection or host would change', () => {
  it('goes back to pending approval and keeps its old tokens, instance URL and connection', async () => {
    const before = await installVictim();
    const tokensBefore = await store.getTokens(before.id);
    // The victim's own admin reinstalls through a connection made for the org: same org, another app.
    const created = await createConnection({
      consumerKey: victim.local.org.clientId,
      consumerSecret: victim.local.org.clientSecret,
      loginUrl: victim.url,
    });
    const { installLink, connection } = (await created.json()) as {
      installLink: string;
      connection: { id: string };
    };
    const done = await install(installLink);
    expect(done.status).toBe(200);
    const held = (await store.get(before.id))!;
    expect(held.status).toBe('pending');
    expect(held.connectionId).toBeUndefined();
    expect(await store.getTokens(before.id)).toEqual(tokensBefore);
    expect(await store.approve(before.id, 'admin')).toBe(true);
    expect((await store.get(before.id))?.connectionId).toBe(connection.id);
    expect(await store.getTokens(before.id)).not.toEqual(tokensBefore);
  });

  it('an instance host change alone is held too; a reinstall on the same host is not', async () => {
    const first = await store.upsert({
      crm: SALESFORCE_KIND,
      externalId: VICTIM_ORG,
      mode: 'oauth',
      tokens: { accessToken: 'one', refreshToken: 'r1' },
      instanceUrl: 'https://acme.my.salesforce.com',
    });
    await store.approve(first.id, 'admin');
    const same = await store.upsert({
      crm: SALESFORCE_KIND,
      externalId: VICTIM_ORG,
      mode: 'oauth',
      tokens: { accessToken: 'two', refreshToken: 'r2' },
      instanceUrl: 'https://acme.my.salesforce.com/',
    });
    expect(same.approvedBy).toBe('admin');
    expect((await store.getTokens(first.id))?.accessToken).toBe('two');
    const moved = await store.upsert({
      crm: SALESFORCE_KIND,
      externalId: VICTIM_ORG,
      mode: 'oauth',
      tokens: { accessToken: 'three', refreshToken: 'r3' },
      instanceUrl: 'https://other.my.salesforce.com',
    });
    expect(moved.status).toBe('pending');
    expect(moved.approvedBy).toBeUndefined();
    expect(moved.instanceUrl).toBe('https://acme.my.salesforce.com/');
    expect((await store.getTokens(first.id))?.accessToken).toBe('two');
  });
});

describe('answers', () => {
  it('a redirect from the token, identity or revoke endpoint is not followed', async () => {
    const received: string[] = [];
    const sink = express();
    sink.use(express.urlencoded({ extended: false }));
    sink.all('/{*any}', (req, res) => {
      received.push(
        `${req.method} ${req.path} ${JSON.stringify(req.body ?? {})} ${req.get('authorization') ?? ''}`,
      );
      res.json({ organization_id: VICTIM_ORG, user_id: '005000000000001AAA' });
    });
    const sinkServer = await serve(sink);
    const redirector = express();
    redirector.all('/{*any}', (req, res) => res.redirect(307, `${sinkServer.url}${req.path}`));
    const from = await serve(redirector);
    const policy = { extraHosts: [], allowLocalHosts: true };

    await expect(
      exchangeAuthorizationCode(
        { clientId: 'key', clientSecret: 'consumer-secret', loginUrl: from.url },
        { code: 'c', codeVerifier: 'v', redirectUri: 'r' },
        policy,
      ),
    ).rejects.toMatchObject({ code: 'SALESFORCE_REDIRECT_REFUSED' });
    const { confirmIdentity } = await import('../connectors/salesforce/oauth/identity.js');
    await expect(
      confirmIdentity(`${from.url}/id/${VICTIM_ORG}/005000000000001AAA`, 'access', policy),
    ).rejects.toMatchObject({ code: 'SALESFORCE_REDIRECT_REFUSED' });
    const installation = { id: 'salesforce-x', instanceUrl: from.url } as Installation;
    await expect(
      revokeSalesforceInstall(config, {
        installation,
        tokens: { accessToken: 'a', refreshToken: 'refresh' },
        ...revokeExtras,
      }),
    ).rejects.toMatchObject({ code: 'CRM_REVOCATION_FAILED' });
    expect(received).toEqual([]);
  });

  it('an answer past 64 KiB is an error, with or without a length, not read further', async () => {
    const big = `{"pad":"${'x'.repeat(200 * 1024)}"}`;
    const app = express();
    app.post('/declared/services/oauth2/token', (_req, res) => res.type('json').send(big));
    app.post('/chunked/services/oauth2/token', (_req, res) => {
      res.type('json');
      for (let i = 0; i < big.length; i += 8192) res.write(big.slice(i, i + 8192));
      res.end();
    });
    const server = await serve(app);
    const policy = { extraHosts: [], allowLocalHosts: true };
    for (const path of ['declared', 'chunked']) {
      await expect(
        exchangeAuthorizationCode(
          { clientId: 'key', clientSecret: 'secret', loginUrl: `${server.url}/${path}` },
          { code: 'c', codeVerifier: 'v', redirectUri: 'r' },
          policy,
        ),
        path,
      ).rejects.toMatchObject({ code: 'SALESFORCE_ANSWER_TOO_LARGE' });
    }
  });
});
