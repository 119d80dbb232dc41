import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { OAuthStateStore } from '../src/auth/oauth-state.js';
import { CookieJar } from './support/cookie-jar.js';
import { suiteSystem } from './support/local-system.js';
import { measured } from './support/measured.js';
import { queuesIdle, runEnded } from './support/system-state.js';

/**
 * The OAuth callback and the admin API, end to end through the real server: callbacks with a missing,
 * malformed, forged, foreign, other-provider, expired or reused `state` are refused before HubSpot's token
 * endpoint is called, each with a code HubSpot would really have accepted; the admin API refuses no token, a
 * wrong token and cookie changes without the CSRF token, and the admin answers carry the security headers.
 */

const system = suiteSystem(
  { companies: 50, logLevel: 'silent' },
  {
    firstRunEnded: true,
    prepare: async () => {
      await queuesIdle(system);
    },
  },
);

function tokenCalls(): number {
  return system.hubspot.stats().calls['oauth.token'] ?? 0;
}

/** A callback with a real, unused authorization code: were the state not checked, the exchange would succeed. */
async function callback(state: string | null, cookie?: string): Promise<{ status: number; text: string }> {
  const code = system.hubspot.issueAuthCode({ redirectUri: `${system.appUrl}/oauth/hubspot/callback` });
  const query = new URLSearchParams({ code, ...(state === null ? {} : { state }) });
  const res = await fetch(`${system.appUrl}/oauth/hubspot/callback?${query}`, {
    redirect: 'manual',
    ...(cookie ? { headers: { cookie } } : {}),
  });
  return { status: res.status, text: await res.text() };
}

/** The `name=value` a browser sends back for a `Set-Cookie` line. */
const sent = (setCookie: string) => setCookie.split(';')[0]!;

describe('OAuth callback state', () => {
  it('refuses missing, malformed, forged, foreign, other-provider, other-browser and expired states, without a token call', async () => {
    const before = {
      tokens: tokenCalls(),
      installation: await system.ctx.installations.get(system.installationId),
    };
    const mine = system.ctx.states;
    const issued = mine.issue('hubspot');
    const [nonce] = issued.state.split('.');
    const expired = new OAuthStateStore(system.ctx.config.encryptionKey, {
      secureCookies: false,
      now: () => Date.now() - 601_000,
    }).issue('hubspot');

    const answers = {
      missing: await callback(null, sent(issued.cookie)),
      malformed: await callback('not-a-state', sent(issued.cookie)),
      forgedSignature: await callback(
        `${nonce}.hubspot.${randomBytes(32).toString('base64url')}`,
        sent(issued.cookie),
      ),
      signedByAnotherApp: await (async () => {
        const other = new OAuthStateStore(randomBytes(32), { secureCookies: false }).issue('hubspot');
        return callback(other.state, sent(other.cookie));
      })(),
      issuedForSalesforce: await callback(mine.issue('salesforce').state, sent(issued.cookie)),
      noCookie: await callback(issued.state),
      anotherBrowsersCookie: await callback(issued.state, sent(mine.issue('hubspot').cookie)),
      expired: await callback(expired.state, sent(expired.cookie)),
    };
    measured(
      'oauth-state-refusals',
      Object.fromEntries(
        Object.entries(answers).map(([k, v]) => [k, `${v.status} ${/<p>([^<]*)<\/p>/.exec(v.text)?.[1]}`]),
      ),
    );
    for (const answer of Object.values(answers)) expect(answer.status).toBe(400);
    expect(answers.missing.text).toMatch(/missing/);
    expect(answers.malformed.text).toMatch(/malformed/);
    expect(answers.forgedSignature.text).toMatch(/not issued by this app/);
    expect(answers.signedByAnotherApp.text).toMatch(/not issued by this app/);
    expect(answers.issuedForSalesforce.text).toMatch(/another provider/);
    expect(answers.noCookie.text).toMatch(/not started in this browser/);
    expect(answers.anotherBrowsersCookie.text).toMatch(/not started in this browser/);
    expect(answers.expired.text).toMatch(/expired or was already used/);
    expect(tokenCalls()).toBe(before.tokens);
    expect(await system.ctx.installations.get(system.installationId)).toEqual(before.installation);
  });

  it('accepts a state once: the same callback replayed is refused and exchanges nothing', async () => {
    const browser = new CookieJar();
    const install = await browser.fetch(`${system.appUrl}/oauth/hubspot/install`);
    const consent = await browser.fetch(install.headers.get('location')!);
    const callbackUrl = consent.headers.get('location')!;
    const first = await browser.fetch(callbackUrl);
    expect(first.status).toBe(302);
    const afterFirst = tokenCalls();
    const replay = await browser.fetch(callbackUrl);
    const text = await replay.text();
    measured('oauth-state-reused', { first: first.status, replay: replay.status });
    expect(replay.status).toBe(400);
    expect(text).toMatch(/already finished/);
    expect(tokenCalls()).toBe(afterFirst);
    await runEnded(system);
  });
});

describe('admin API', () => {
  const api = (path: string) => `${system.appUrl}/admin/api${path}`;

  async function login(): Promise<{ cookie: string; csrf: string }> {
    const res = await fetch(`${system.appUrl}/admin/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: system.ctx.config.adminToken }),
      redirect: 'manual',
    });
    expect(res.status).toBe(303);
    const cookies = res.headers.getSetCookie();
    const session = cookies.find((c) => c.startsWith('rc_admin_session='))!.split(';')[0]!;
    const csrf = cookies
      .find((c) => c.startsWith('XSRF-TOKEN='))!
      .split(';')[0]!
      .split('=')[1]!;
    return { cookie: session, csrf };
  }

  it('refuses no token and a wrong token (401), admits the right one', async () => {
    const statuses = {
      none: (await fetch(api('/installations'))).status,
      wrong: (
        await fetch(api('/installations'), {
          headers: { authorization: `Bearer ${system.ctx.config.adminToken}x` },
        })
      ).status,
      empty: (await fetch(api('/installations'), { headers: { authorization: 'Bearer ' } })).status,
      right: (
        await fetch(api('/installations'), {
          headers: { authorization: `Bearer ${system.ctx.config.adminToken}` },
        })
      ).status,
    };
    expect(statuses).toEqual({ none: 401, wrong: 401, empty: 401, right: 200 });
  });

  it('refuses a state-changing cookie request without the CSRF token or with a wrong one (403)', async () => {
    const { cookie, csrf } = await login();
    const sync = (headers: Record<string, string>) =>
      fetch(api(`/installations/${system.installationId}/sync`), {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie, ...headers },
        body: JSON.stringify({ full: false }),
      });
    const statuses = {
      noToken: (await sync({})).status,
      wrongToken: (await sync({ 'x-csrf-token': `${csrf}x` })).status,
      // A cross-site form cannot set the header; its Origin changes nothing without the token.
      crossSite: (await sync({ origin: 'https://evil.example' })).status,
      rightToken: (await sync({ 'x-csrf-token': csrf })).status,
    };
    expect(statuses).toEqual({ noToken: 403, wrongToken: 403, crossSite: 403, rightToken: 202 });
    await runEnded(system);
  });

  it('sends the usual security headers on admin pages and API answers', async () => {
    const { cookie } = await login();
    for (const path of ['/admin', '/admin/api/installations']) {
      const res = await fetch(`${system.appUrl}${path}`, { headers: { cookie } });
      expect(res.status, path).toBe(200);
      const h = Object.fromEntries(res.headers);
      expect(h['content-security-policy'], path).toMatch(/default-src 'none'/);
      expect(h['content-security-policy'], path).toMatch(/frame-ancestors 'none'/);
      expect(h['x-frame-options'], path).toBe('DENY');
      expect(h['x-content-type-options'], path).toBe('nosniff');
      expect(h['referrer-policy'], path).toBe('no-referrer');
      expect(h['cache-control'], path).toBe('no-store');
      expect(h['x-powered-by'], path).toBeUndefined();
    }
  });

  it('sends the security headers on the OAuth pages too (issue 16, point 6)', async () => {
    for (const path of ['/oauth/hubspot/callback', '/oauth/hubspot/callback?state=x&error=access_denied']) {
      const res = await fetch(`${system.appUrl}${path}`);
      expect(res.status, path).toBe(400);
      const h = Object.fromEntries(res.headers);
      expect(h['content-type'], path).toMatch(/text\/html/);
      expect(h['content-security-policy'], path).toMatch(/default-src 'none'/);
      expect(h['content-security-policy'], path).toMatch(/frame-ancestors 'none'/);
      expect(h['x-frame-options'], path).toBe('DENY');
      expect(h['x-content-type-options'], path).toBe('nosniff');
      expect(h['referrer-policy'], path).toBe('no-referrer');
    }
  });
});
