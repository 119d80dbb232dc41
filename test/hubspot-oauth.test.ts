import { randomBytes, randomUUID } from 'node:crypto';
import express from 'express';
import type { Redis } from 'ioredis';
import nock from 'nock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createLocalHubSpot,
  LOCAL_HUBSPOT_CLIENT_ID,
  type LocalHubSpot,
  type LocalHubSpotServer,
} from '../connectors/hubspot/local/index.js';
import {
  createHubSpotNotConfiguredRouter,
  createHubSpotOAuthRouter,
} from '../connectors/hubspot/oauth/oauth-routes.js';
import { exchangeHubSpotCode } from '../connectors/hubspot/oauth/oauth-tokens.js';
import { HUBSPOT_DEFAULT_API_VERSION, hubspotPaths } from '../connectors/hubspot/provider.js';
import { oauthResultPage } from '../src/admin/views/oauth-result.js';
import { type IssuedOAuthState, OAuthStateStore } from '../src/auth/oauth-state.js';
import { type Installation, InstallationStore } from '../src/installations/store.js';
import { closeRedis, createRedis, deleteByPattern, waitForRedis } from '../src/redis.js';
import { Keys } from '../src/storage/keys.js';
import { SecretBox } from '../src/util/secretbox.js';
import { CookieJar } from './support/cookie-jar.js';
import { localHubSpotOAuth, startLocalHubSpot } from './support/local-hubspot.js';
import { listenOnLoopback } from './support/loopback-server.js';
import { REDIS_URL } from './support/redis-url.js';

/** The date-versioned paths the connector calls by default. */
const P = hubspotPaths(HUBSPOT_DEFAULT_API_VERSION);

const prefix = `rc-test-${randomUUID()}`;
const signingKey = randomBytes(32);
let redis: Redis;
let store: InstallationStore;
let states: OAuthStateStore;

interface InstallApp {
  base: string;
  installed: Installation[];
  close(): Promise<void>;
}

async function startInstallApp(
  local: LocalHubSpotServer,
  onInstalled?: (installation: Installation) => Promise<void>,
): Promise<InstallApp> {
  const installed: Installation[] = [];
  const app = express();
  const served = await listenOnLoopback(app);
  const base = served.url;
  app.use(
    createHubSpotOAuthRouter({
      ...localHubSpotOAuth(local),
      appUrl: base,
      authorizeUrl: `${local.url}/oauth/authorize`,
      states,
      installations: store,
      // The server's renderer: the admin's look (issue 31).
      renderPage: (page) => oauthResultPage(page).value,
      onInstalled:
        onInstalled ??
        (async (installation) => {
          installed.push(installation);
          // As the server does for a portal in INSTALL_ALLOWLIST.
          await store.approve(installation.id, 'allowlist');
        }),
    }),
  );
  return {
    base,
    installed,
    close: () => served.close(),
  };
}

/** One browser for the whole file: the state cookie an install sets goes back with its callback. */
const browser = new CookieJar();
const manual = (url: string) => browser.fetch(url);
/** A request from a browser holding only the cookie issued with `issued`. */
const withCookieOf = (url: string, issued: IssuedOAuthState) =>
  fetch(url, { redirect: 'manual', headers: { cookie: issued.cookie.split(';')[0]! } });

/** Install redirect -> local consent screen -> the callback URL it redirects to. */
async function callbackUrlFor(app: InstallApp): Promise<string> {
  const install = await manual(`${app.base}/oauth/hubspot/install`);
  expect(install.status).toBe(302);
  const consent = await manual(install.headers.get('location')!);
  expect(consent.status).toBe(302);
  return consent.headers.get('location')!;
}

async function expectPage(res: Response, status: number, ...phrases: string[]): Promise<string> {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toContain('text/html');
  const text = await res.text();
  for (const phrase of phrases) expect(text).toContain(phrase);
  expect(text).not.toMatch(/\bat .*\.(ts|js):\d+/);
  return text;
}

let hubspot: LocalHubSpot;
let hubspotServer: LocalHubSpotServer;
let app: InstallApp;

beforeAll(async () => {
  nock.enableNetConnect();
  redis = createRedis(REDIS_URL, 'producer');
  await waitForRedis(redis);
  store = new InstallationStore(redis, new SecretBox(randomBytes(32)), prefix);
  states = new OAuthStateStore(signingKey, { secureCookies: false });
  ({ hubspot, server: hubspotServer } = await startLocalHubSpot());
  app = await startInstallApp(hubspotServer);
});

afterEach(() => {
  hubspot.setAuthorizeDecision('approve');
});

afterAll(async () => {
  await app.close();
  await hubspotServer.close();
  await deleteByPattern(redis, `${prefix}:*`);
  await closeRedis(redis);
});

describe('GET /oauth/hubspot/install', () => {
  it('redirects to the authorize URL with client id, redirect URI, space-separated scopes and a state', async () => {
    const res = await manual(`${app.base}/oauth/hubspot/install`);
    expect(res.status).toBe(302);
    const location = res.headers.get('location')!;
    const url = new URL(location);
    expect(`${url.origin}${url.pathname}`).toBe(`${hubspotServer.url}/oauth/authorize`);
    expect(url.searchParams.get('client_id')).toBe(LOCAL_HUBSPOT_CLIENT_ID);
    expect(url.searchParams.get('redirect_uri')).toBe(`${app.base}/oauth/hubspot/callback`);
    expect(url.searchParams.get('scope')).toBe(
      'oauth crm.objects.companies.read crm.objects.companies.write crm.schemas.companies.write',
    );
    expect(location).toContain('scope=oauth%20crm.objects.companies.read%20');
    expect(url.searchParams.get('state')).toMatch(/^[\w-]+\.hubspot\.[\w-]+$/);
    // The browser's half: HttpOnly, SameSite=Lax, only sent back to the HubSpot OAuth routes, 10 minutes.
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('rc_oauth_hubspot='));
    expect(cookie).toMatch(/; Path=\/oauth\/hubspot;/);
    expect(cookie).toContain('; Max-Age=600;');
    expect(cookie).toContain('; HttpOnly');
    expect(cookie).toContain('; SameSite=Lax');
  });
});

describe('GET /oauth/hubspot/callback', () => {
  it('exchanges the code, stores the installation with sealed tokens, calls onInstalled and redirects to /admin', async () => {
    hubspot.resetStats();
    const callback = await callbackUrlFor(app);
    const before = Date.now();
    const res = await manual(callback);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/admin?installed=hubspot-62515');
    // A new OAuth installation reaches the host pending; the host let it in (as for INSTALL_ALLOWLIST).
    expect(app.installed.map((i) => [i.id, i.crm, i.externalId, i.mode, i.status])).toEqual([
      ['hubspot-62515', 'hubspot', '62515', 'oauth', 'pending'],
    ]);
    expect(app.installed[0]).toMatchObject({
      installedBy: 'installer@example.test',
      accountName: 'portal-62515.example.test',
    });
    expect((await store.get('hubspot-62515'))?.status).toBe('connected');
    const tokens = await store.getTokens('hubspot-62515');
    expect(tokens?.accessToken).toMatch(/^local-at-/);
    expect(tokens?.refreshToken).toMatch(/^local-rt-/);
    expect(tokens!.expiresAt! - before).toBeGreaterThan(1790_000);
    expect(tokens!.expiresAt! - before).toBeLessThanOrEqual(1800_000 + (Date.now() - before));
    const raw = await redis.hget(new Keys(prefix).installation('hubspot-62515'), 'tokens');
    expect(raw).not.toContain(tokens!.accessToken);
    expect(hubspot.stats().calls['oauth.token']).toBe(1);

    // The same callback again: the callback took the browser's half back, so the state is spent.
    expect(browser.has('rc_oauth_hubspot')).toBe(false);
    await expectPage(await manual(callback), 400, 'already finished');
    expect(hubspot.stats().calls['oauth.token']).toBe(1);
  });

  it('an install again of a portal already let in is a reconnect, and the admin it lands on is told so (issue 31)', async () => {
    await manual(await callbackUrlFor(app));
    const again = await manual(await callbackUrlFor(app));
    expect(again.status).toBe(302);
    expect(again.headers.get('location')).toBe('/admin?installed=hubspot-62515&reconnected=1');
  });

  it('refuses a missing, forged, foreign or expired state before touching HubSpot', async () => {
    hubspot.resetStats();
    const callback = new URL(await callbackUrlFor(app));
    const code = callback.searchParams.get('code')!;
    const at = (state?: string) =>
      manual(
        `${app.base}/oauth/hubspot/callback?code=${code}${state === undefined ? '' : `&state=${encodeURIComponent(state)}`}`,
      );

    await expectPage(await at(), 400, 'state parameter is missing');
    const [nonce] = callback.searchParams.get('state')!.split('.');
    await expectPage(await at(`${nonce}.hubspot.AAAAforged`), 400, 'not issued by this app');
    const otherApp = new OAuthStateStore(randomBytes(32), { secureCookies: false });
    await expectPage(await at(otherApp.issue('hubspot').state), 400, 'not issued by this app');
    await expectPage(await at(states.issue('salesforce').state), 400, 'belongs to another provider');
    // Issued by this app, but to another browser: this browser's cookie holds another nonce.
    await expectPage(await at(states.issue('hubspot').state), 400, 'not started in this browser');
    // The right state with no cookie at all (a link sent to someone else).
    const stray = states.issue('hubspot');
    await expectPage(
      await fetch(
        `${app.base}/oauth/hubspot/callback?code=${code}&state=${encodeURIComponent(stray.state)}`,
        {
          redirect: 'manual',
        },
      ),
      400,
      'not started in this browser',
    );

    const issuedLongAgo = new OAuthStateStore(signingKey, {
      secureCookies: false,
      now: () => Date.now() - 601_000,
    }).issue('hubspot');
    await expectPage(
      await withCookieOf(
        `${app.base}/oauth/hubspot/callback?code=${code}&state=${encodeURIComponent(issuedLongAgo.state)}`,
        issuedLongAgo,
      ),
      400,
      'expired or was already used',
    );

    expect(hubspot.stats().calls['oauth.token'] ?? 0).toBe(0);
  });

  it('shows a clear page when the admin declines at HubSpot', async () => {
    hubspot.setAuthorizeDecision('deny');
    const callback = await callbackUrlFor(app);
    expect(callback).toContain('error=access_denied');
    await expectPage(
      await manual(callback),
      400,
      'HubSpot did not connect',
      'declined',
      'start the install again',
    );
  });

  it('checks the state before anything else and never shows text from the query (issue 16, point 6)', async () => {
    hubspot.resetStats();
    const injected = 'Call 555-0100 now <b>to restore access</b>';
    const query = (state: string | null) =>
      `${app.base}/oauth/hubspot/callback?error=access_denied&error_description=${encodeURIComponent(injected)}${state === null ? '' : `&state=${encodeURIComponent(state)}`}`;
    // No state: the state is what is refused, not the error the query claims.
    const noState = await expectPage(await manual(query(null)), 400, 'state parameter is missing');
    expect(noState).not.toContain('555-0100');
    // A valid state and an error: fixed text only.
    const issued = states.issue('hubspot');
    const withState = await expectPage(
      await withCookieOf(query(issued.state), issued),
      400,
      'HubSpot did not connect',
    );
    expect(withState).not.toContain('555-0100');
    expect(withState).not.toContain('restore access');
    expect(hubspot.stats().calls['oauth.token'] ?? 0).toBe(0);
  });

  it('a new install the host does not let in stays pending and says so (issue 16, point 1)', async () => {
    const other = createLocalHubSpot({ portalId: '99999' });
    const otherServer = await other.listen();
    const seen: Installation[] = [];
    const waiting = await startInstallApp(otherServer, async (installation) => {
      seen.push(installation);
    });
    try {
      const page = await expectPage(
        await manual(await callbackUrlFor(waiting)),
        200,
        'waiting for approval',
        // The admin's look, and what happens next (issue 31).
        '/admin/assets/admin.css',
        'Next steps',
        'href="/admin/installations/hubspot-99999"',
        'INSTALL_ALLOWLIST',
      );
      expect(page).toMatch(/Nothing more is needed in HubSpot/);
      expect((await store.get('hubspot-99999'))?.status).toBe('pending');
      expect(seen.map((i) => i.status)).toEqual(['pending']);
      // Installed again: still waiting, and still says so.
      await expectPage(await manual(await callbackUrlFor(waiting)), 200, 'waiting for approval');
    } finally {
      await waiting.close();
      await otherServer.close();
    }
  });

  it("shows a clear page when HubSpot's token endpoint refuses the code", async () => {
    const callback = new URL(await callbackUrlFor(app));
    callback.searchParams.set('code', 'local-code-not-issued');
    await expectPage(
      await manual(callback.toString()),
      400,
      'HubSpot refused the install',
      'did not accept the authorization code',
    );
  });

  it('asks the introspection endpoint for the portal when the token response has no hub_id', async () => {
    const other = createLocalHubSpot({ omitHubIdInTokenResponse: true, portalId: '777' });
    const otherServer = await other.listen();
    const otherApp = await startInstallApp(otherServer);
    try {
      const res = await manual(await callbackUrlFor(otherApp));
      expect(res.headers.get('location')).toBe('/admin?installed=hubspot-777');
      expect(other.stats().calls['oauth.introspect']).toBe(1);
      expect(otherApp.installed.map((i) => i.externalId)).toEqual(['777']);
    } finally {
      await otherApp.close();
      await otherServer.close();
    }
  });

  it('says so when the installation was stored but onInstalled failed', async () => {
    const failing = await startInstallApp(hubspotServer, async () => {
      throw new Error('field setup failed: HubSpot answered 403');
    });
    try {
      const text = await expectPage(
        await manual(await callbackUrlFor(failing)),
        500,
        'Installed, but set-up failed',
        'The details are in the app',
      );
      // Fixed text: the error's own words go to the log, not to the page.
      expect(text).not.toContain('field setup failed');
    } finally {
      await failing.close();
    }
  });
});

describe('exchangeHubSpotCode', () => {
  it('posts every parameter form-encoded in the body of the v3 token endpoint', async () => {
    const api = 'https://api.hubspot.test';
    let contentType: string | null = null;
    let params: Record<string, string> = {};
    let search = '';
    nock(api)
      .post(P.token)
      .query(true)
      .reply(async (req: Request) => {
        contentType = req.headers.get('content-type');
        search = new URL(req.url).search;
        params = Object.fromEntries(new URLSearchParams(await req.text()));
        return [
          200,
          { access_token: 'at', refresh_token: 'rt', expires_in: 1800, token_type: 'bearer', hub_id: 42 },
        ];
      });
    const grant = await exchangeHubSpotCode(
      { apiUrl: api, clientId: 'cid', clientSecret: 'secret', now: () => 1_000 },
      'the-code',
      'https://app.test/oauth/hubspot/callback',
    );
    expect(contentType).toContain('application/x-www-form-urlencoded');
    expect(search).toBe('');
    expect(params).toEqual({
      grant_type: 'authorization_code',
      client_id: 'cid',
      client_secret: 'secret',
      redirect_uri: 'https://app.test/oauth/hubspot/callback',
      code: 'the-code',
    });
    expect(grant).toEqual({
      tokens: { accessToken: 'at', refreshToken: 'rt', expiresAt: 1_801_000 },
      hubId: '42',
    });
    nock.cleanAll();
  });
});

describe('GET /oauth/hubspot/install without an app configured (issue 31)', () => {
  it('names the missing variables: a page for a browser, JSON for a script', async () => {
    const bare = express().use(
      createHubSpotNotConfiguredRouter({
        missing: ['HUBSPOT_CLIENT_ID', 'HUBSPOT_CLIENT_SECRET'],
        tokenVariable: 'HUBSPOT_ACCESS_TOKEN',
        renderPage: (page) => oauthResultPage(page).value,
      }),
    );
    const served = await listenOnLoopback(bare);
    try {
      const page = await fetch(`${served.url}/oauth/hubspot/install`, {
        headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
      });
      await expectPage(
        page,
        503,
        'HubSpot install is not configured',
        'HUBSPOT_CLIENT_ID and HUBSPOT_CLIENT_SECRET are not set',
        'HUBSPOT_ACCESS_TOKEN',
        '/admin/assets/admin.css',
      );
      const json = await fetch(`${served.url}/oauth/hubspot/install`);
      expect(json.status).toBe(503);
      expect(await json.json()).toMatchObject({
        code: 'OAUTH_NOT_CONFIGURED',
        missing: ['HUBSPOT_CLIENT_ID', 'HUBSPOT_CLIENT_SECRET'],
      });
    } finally {
      await served.close();
    }
  });
});
