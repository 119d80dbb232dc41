import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSalesforceConnector } from '../connectors/salesforce/connector.js';
import { createLocalSalesforce, type LocalSalesforce } from '../connectors/salesforce/local/index.js';
import { createSalesforceOAuthRouter } from '../connectors/salesforce/oauth/oauth-routes.js';
import { ensureSalesforceTokenInstallation } from '../connectors/salesforce/oauth/token-install.js';
import { createSalesforceTokenRefresher } from '../connectors/salesforce/oauth/token-refresher.js';
import { OAuthStateStore } from '../src/auth/oauth-state.js';
import { RefreshRejectedError, TokenManager } from '../src/auth/token-manager.js';
import type { Config } from '../src/config.js';
import { CrmDisconnectedError, CrmUnauthorizedError } from '../src/crm/errors.js';
import { OPEN_GATE } from '../src/crm/request-gate.js';
import { type Installation, InstallationStore } from '../src/installations/store.js';
import { createLogger } from '../src/log.js';
import { crmKind } from '../src/providers.js';
import { closeRedis, createRedis, waitForRedis } from '../src/redis.js';
import { Keys } from '../src/storage/keys.js';
import { SecretBox } from '../src/util/secretbox.js';
import { CookieJar } from './support/cookie-jar.js';
import { REDIS_URL } from './support/redis-url.js';
import { localSalesforceConfig } from './support/salesforce-config.js';

/**
 * The OAuth web server flow with PKCE through the real routes, against the local Salesforce over real HTTP,
 * with the state, verifier and installations in the real Redis under a prefix of this test's own.
 */

let redis: Redis;
let prefix: string;
let local: LocalSalesforce;
let sf: { url: string; close(): Promise<void> };
let appServer: Server;
let appUrl: string;
let store: InstallationStore;
let states: OAuthStateStore;
let installed: Installation[];
let onInstalledError: Error | null;
let config: Pick<Config, 'appUrl' | 'salesforce'>;
const app = express();
const logger = createLogger('silent');

beforeAll(async () => {
  redis = createRedis(REDIS_URL, 'producer', 'salesforce-oauth-test');
  await waitForRedis(redis);
  appServer = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => appServer.once('listening', resolve));
  appUrl = `http://127.0.0.1:${(appServer.address() as AddressInfo).port}`;
  // Routes are mounted per test (the config changes); this dispatches to the current router.
  app.use((req, res, next) => current(req, res, next));
});

let current: express.RequestHandler = (_req, _res, next) => next();

beforeEach(async () => {
  prefix = `rc-test-${randomUUID()}`;
  local = createLocalSalesforce({ callbackUrls: [`${appUrl}/oauth/salesforce/callback`] });
  sf = await local.listen();
  const key = randomBytes(32);
  store = new InstallationStore(redis, new SecretBox(key), prefix);
  states = new OAuthStateStore(key, { secureCookies: false });
  browser = new CookieJar();
  installed = [];
  onInstalledError = null;
  config = localSalesforceConfig(appUrl, local, sf.url);
  current = createSalesforceOAuthRouter({
    config,
    states,
    store,
    logger,
    onInstalled: async (installation) => {
      installed.push(installation);
      if (onInstalledError) throw onInstalledError;
      // As the server does for an org in INSTALL_ALLOWLIST (otherwise it stays pending: issue 16).
      await store.approve(installation.id, 'allowlist');
    },
  });
});

afterEach(async () => {
  await Promise.all(canned.splice(0).map((c) => c.close()));
  await sf.close();
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
});

afterAll(async () => {
  await new Promise((resolve) => appServer.close(resolve));
  await closeRedis(redis);
});

const canned: { close(): Promise<void> }[] = [];

/** A token endpoint that always gives the same answer, for responses the local Salesforce never gives. */
async function cannedTokenEndpoint(
  status: number,
  body: Record<string, string>,
  check: (form: Record<string, string>) => boolean = () => true,
): Promise<string> {
  const server = express()
    .use(express.urlencoded({ extended: false }))
    .post('/services/oauth2/token', (req, res) => {
      if (!check(req.body as Record<string, string>))
        return void res.status(418).json({ error: 'unexpected request' });
      res.status(status).json(body);
    })
    .listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  canned.push({ close: () => new Promise((resolve) => server.close(() => resolve())) });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The admin's browser: a fresh one per test. */
let browser: CookieJar;

async function get(url: string): Promise<Response> {
  return browser.fetch(url);
}

/** install -> Salesforce authorize -> back to the callback URL (not yet followed). */
async function authorize(): Promise<{ callback: string; authorizeUrl: URL }> {
  const install = await get(`${appUrl}/oauth/salesforce/install`);
  expect(install.status).toBe(302);
  const authorizeUrl = new URL(install.headers.get('location')!);
  const consent = await get(authorizeUrl.toString());
  expect(consent.status).toBe(302);
  return { callback: consent.headers.get('location')!, authorizeUrl };
}

describe('install', () => {
  it('sends the admin to Salesforce with an S256 challenge whose verifier is sealed in the browser cookie', async () => {
    const install = await get(`${appUrl}/oauth/salesforce/install`);
    expect(install.status).toBe(302);
    const url = new URL(install.headers.get('location')!);
    expect(`${url.origin}${url.pathname}`).toBe(`${sf.url}/services/oauth2/authorize`);
    expect(url.searchParams.get('response_type')).toBe('code');
    expect(url.searchParams.get('client_id')).toBe(local.org.clientId);
    expect(url.searchParams.get('redirect_uri')).toBe(`${appUrl}/oauth/salesforce/callback`);
    expect(url.searchParams.get('scope')).toBe('api refresh_token');
    const state = url.searchParams.get('state')!;
    expect(state).toMatch(/^[\w-]+\.salesforce\.[\w-]+$/);

    const cookie = install.headers.getSetCookie().find((c) => c.startsWith('rc_oauth_salesforce='))!;
    expect(cookie).toMatch(/; Path=\/oauth\/salesforce;/);
    expect(cookie).toContain('; HttpOnly');
    expect(cookie).toContain('; SameSite=Lax');
    const verifier = states.consume('salesforce', state, cookie.split(';')[0])!.codeVerifier!;
    // RFC 7636: 43 to 128 characters of the unreserved set, and the method named.
    expect(verifier).toMatch(/^[A-Za-z0-9\-._~]{43,128}$/);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toBe(
      createHash('sha256').update(verifier).digest('base64url'),
    );
    expect(install.headers.get('location')).not.toContain(verifier);
    expect(cookie).not.toContain(verifier);
    // Nothing was stored for an anonymous install request.
    expect(await redis.keys(`${prefix}:*`)).toEqual([]);
  });

  it('completes: tokens sealed at rest with the instance URL and org id, onInstalled called once', async () => {
    const { callback } = await authorize();
    const done = await get(callback);
    expect(done.status).toBe(200);
    const text = await done.text();
    expect(text).toContain('Salesforce is connected');
    // What to do next, with the way to the admin (issue 31).
    expect(text).toContain('Next steps');
    expect(text).toContain(`href="/admin?installed=salesforce-${local.orgId}"`);

    expect(installed).toHaveLength(1);
    const inst = installed[0]!;
    expect(inst).toMatchObject({
      crm: crmKind('salesforce'),
      externalId: local.orgId,
      mode: 'oauth',
      instanceUrl: sf.url,
    });
    const tokens = await store.getTokens(inst.id);
    expect(tokens?.accessToken).toMatch(new RegExp(`^${local.orgId}!`));
    expect(tokens?.refreshToken).toBeTruthy();
    const raw = await redis.hget(new Keys(prefix).installation(inst.id), 'tokens');
    expect(raw).not.toContain(tokens!.accessToken);
    expect(raw).not.toContain(tokens!.refreshToken!);
    expect(local.counters()['oauth.token']).toBe(1);
  });

  it('refuses the same callback twice: the callback takes back the browser cookie', async () => {
    const { callback } = await authorize();
    expect((await get(callback)).status).toBe(200);
    const again = await get(callback);
    expect(again.status).toBe(400);
    expect(await again.text()).toMatch(/already finished/);
    expect(installed).toHaveLength(1);
  });

  it('refuses a callback in a browser that did not start the install', async () => {
    const { callback } = await authorize();
    const elsewhere = await fetch(callback, { redirect: 'manual' });
    expect(elsewhere.status).toBe(400);
    expect(await elsewhere.text()).toMatch(/not started in this browser/);
    expect(local.counters()['oauth.token']).toBeUndefined();
    expect(installed).toEqual([]);
  });

  it('refuses a state this app did not sign', async () => {
    const res = await get(`${appUrl}/oauth/salesforce/callback?code=abc&state=forged.salesforce.signature`);
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/not issued by this app/);
    expect(local.counters()['oauth.token']).toBeUndefined();
  });

  it('shows a clear page when the admin declines', async () => {
    local.setConsent('deny');
    const { callback } = await authorize();
    expect(new URL(callback).searchParams.get('error')).toBe('access_denied');
    const res = await get(callback);
    expect(res.status).toBe(403);
    const page = await res.text();
    expect(page).toMatch(/declined access/);
    expect(page).toContain('/oauth/salesforce/install');
    expect(installed).toEqual([]);
  });

  it.each([
    ['uninstalled', /not installed in this org/, /Approve Uninstalled Connected Apps/],
    ['not_approved', /only admits users an admin has approved/, /add your profile or a permission set/],
  ] as const)(
    'turns the %s refusal into fixed text saying what an admin must do',
    async (kind, why, what) => {
      local.setConsent(kind);
      const { callback } = await authorize();
      const res = await get(callback);
      expect(res.status).toBe(403);
      const page = await res.text();
      expect(page).toMatch(why);
      expect(page).toMatch(what);
      expect(installed).toEqual([]);
    },
  );

  it('never echoes what the callback was sent', async () => {
    const { authorizeUrl } = await authorize();
    const state = authorizeUrl.searchParams.get('state')!;
    const res = await get(
      `${appUrl}/oauth/salesforce/callback?state=${encodeURIComponent(state)}` +
        `&error=${encodeURIComponent('<script>alert(1)</script>')}&error_description=${encodeURIComponent('call +1 555 0100 now')}`,
    );
    expect(res.status).toBe(403);
    const page = await res.text();
    expect(page).not.toContain('alert(1)');
    expect(page).not.toContain('555');
    expect(page).toMatch(/Salesforce refused the authorisation/);
  });

  it('fails the exchange when the verifier does not match the challenge (PKCE is checked)', async () => {
    const { authorizeUrl } = await authorize();
    // A state whose sealed verifier is not the one the challenge was made from.
    const issued = states.issue('salesforce', { codeVerifier: randomBytes(64).toString('base64url') });
    browser.set(issued.cookie);
    authorizeUrl.searchParams.set('state', issued.state);
    const consent = await get(authorizeUrl.toString());
    const res = await get(consent.headers.get('location')!);
    expect(res.status).toBe(502);
    // Fixed text: Salesforce's own words (invalid_grant) go to the log only.
    expect(await res.text()).toMatch(/did not accept it/);
    expect(installed).toEqual([]);
  });

  it('says the org is connected but setup failed when onInstalled throws', async () => {
    onInstalledError = new Error('field creation refused');
    const { callback } = await authorize();
    const res = await get(callback);
    expect(res.status).toBe(500);
    const page = await res.text();
    expect(page).toMatch(/Connected, but setup did not finish/);
    expect(page).not.toMatch(/field creation refused/);
    expect(page).toMatch(/details are in the app/);
  });

  it('answers 503 with what to set when no connected app is configured', async () => {
    config.salesforce.clientId = undefined;
    const res = await get(`${appUrl}/oauth/salesforce/install`);
    expect(res.status).toBe(503);
    expect(await res.text()).toMatch(/SALESFORCE_CLIENT_ID/);
  });

  it('names exactly the missing variables: a page for a browser, JSON for a script (issue 31)', async () => {
    config.salesforce.clientId = undefined;
    config.salesforce.clientSecret = undefined;
    const page = await browser.fetch(`${appUrl}/oauth/salesforce/install`, {
      headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
    });
    expect(page.status).toBe(503);
    expect(page.headers.get('content-type')).toContain('text/html');
    const text = await page.text();
    expect(text).toContain('SALESFORCE_CLIENT_ID and SALESFORCE_CLIENT_SECRET are not set');
    expect(text).toContain(`${appUrl}/oauth/salesforce/callback`);
    const json = await browser.fetch(`${appUrl}/oauth/salesforce/install`, {
      headers: { accept: 'application/json' },
    });
    expect(json.status).toBe(503);
    expect(await json.json()).toMatchObject({
      code: 'OAUTH_NOT_CONFIGURED',
      missing: ['SALESFORCE_CLIENT_ID', 'SALESFORCE_CLIENT_SECRET'],
    });
    config.salesforce.clientSecret = local.org.clientSecret;
    const one = await (await browser.fetch(`${appUrl}/oauth/salesforce/install`)).json();
    expect(one).toMatchObject({ missing: ['SALESFORCE_CLIENT_ID'] });
  });

  it('does not trust a token response whose signature does not verify', async () => {
    const login = await cannedTokenEndpoint(200, {
      access_token: '00Dxx!token',
      refresh_token: 'refresh',
      instance_url: 'https://attacker.example',
      id: 'https://login.salesforce.com/id/00D000000000001AAA/005000000000001AAA',
      issued_at: '1700000000000',
      signature: Buffer.from('not the hmac').toString('base64'),
      token_type: 'Bearer',
    });
    config.salesforce.loginUrl = login;
    const issued = states.issue('salesforce', { codeVerifier: 'v'.repeat(64) });
    browser.set(issued.cookie);
    const res = await get(
      `${appUrl}/oauth/salesforce/callback?code=abc&state=${encodeURIComponent(issued.state)}`,
    );
    expect(res.status).toBe(502);
    expect(await res.text()).toMatch(/signature check/);
    expect(installed).toEqual([]);
  });
});

describe('refresh', () => {
  async function install(): Promise<Installation> {
    const { callback } = await authorize();
    expect((await get(callback)).status).toBe(200);
    return installed[0]!;
  }

  /** A connector for a fresh installation whose tokens the TokenManager refreshes. */
  async function installedConnector(httpOptions?: { retry: { maxRetries: number } }) {
    const inst = await install();
    const manager = new TokenManager(store, redis, { salesforce: createSalesforceTokenRefresher(config) });
    const connector = createSalesforceConnector({
      installation: inst,
      tokens: manager.source(inst.id),
      gate: OPEN_GATE,
      config,
      ...(httpOptions ? { httpOptions } : {}),
    });
    return { inst, connector };
  }

  it('refreshes once for many concurrent callers, then every call succeeds', async () => {
    const { inst, connector } = await installedConnector({ retry: { maxRetries: 0 } });
    await connector.ensureFields();
    local.seedAccounts(5);
    local.expireAccessTokens();
    local.resetCounters();
    const pages = await Promise.all([1, 2, 3, 4].map(() => connector.listCompanies(null)));
    expect(pages.every((p) => p.records.length === 5)).toBe(true);
    expect(local.counters()['oauth.token']).toBe(1);
    const tokens = await store.getTokens(inst.id);
    expect(local.org.sessionUser(tokens!.accessToken)).toBe(local.integrationUserId);
  });

  it('turns a revoked refresh token into a disconnected installation', async () => {
    const { inst, connector } = await installedConnector();
    local.revokeRefreshTokens();
    local.expireAccessTokens();
    await expect(connector.listCompanies(null)).rejects.toBeInstanceOf(CrmDisconnectedError);
    expect((await store.get(inst.id))?.status).toBe('disconnected');
    expect((await store.get(inst.id))?.statusReason).toMatch(/invalid_grant/);
  });

  it('maps invalid_grant from the token endpoint to RefreshRejectedError', async () => {
    const org = await cannedTokenEndpoint(
      400,
      { error: 'invalid_grant', error_description: 'expired access/refresh token' },
      (form) =>
        form.grant_type === 'refresh_token' &&
        form.refresh_token === 'r1' &&
        form.client_secret === config.salesforce.clientSecret,
    );
    const refresh = createSalesforceTokenRefresher(config);
    const err = await refresh(
      { accessToken: 'a', refreshToken: 'r1' },
      {
        id: 'salesforce-x',
        crm: crmKind('salesforce'),
        externalId: 'x',
        mode: 'oauth',
        status: 'connected',
        instanceUrl: org,
        createdAt: '',
        updatedAt: '',
        hasReportsApiKey: false,
      },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RefreshRejectedError);
    expect((err as RefreshRejectedError).providerCode).toBe('invalid_grant');
  });
});

describe('token mode', () => {
  it('makes one installation from SALESFORCE_INSTANCE_URL and SALESFORCE_ACCESS_TOKEN', async () => {
    const token = local.issueAccessToken();
    const cfg = { salesforce: { ...config.salesforce, instanceUrl: sf.url, accessToken: token } };
    const inst = await ensureSalesforceTokenInstallation(cfg, store);
    expect(inst).toMatchObject({
      crm: crmKind('salesforce'),
      mode: 'token',
      externalId: local.orgId,
      instanceUrl: sf.url,
    });
    expect(await store.getTokens(inst!.id)).toEqual({ accessToken: token });
    expect(local.counters().query).toBe(1);
    // Again on the next start: the same installation.
    expect((await ensureSalesforceTokenInstallation(cfg, store))?.id).toBe(inst!.id);
    expect(await store.list()).toHaveLength(1);
  });

  it('is a no-op without the variables and names the variable when the token is refused', async () => {
    expect(await ensureSalesforceTokenInstallation(config, store)).toBeNull();
    const cfg = { salesforce: { ...config.salesforce, instanceUrl: sf.url, accessToken: 'stale' } };
    const err = await ensureSalesforceTokenInstallation(cfg, store).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrmUnauthorizedError);
    expect((err as Error).message).toMatch(/SALESFORCE_ACCESS_TOKEN/);
  });
});
