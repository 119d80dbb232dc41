import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HUBSPOT_SCOPE_PURPOSES } from '../connectors/hubspot/manifest/listing-guide.js';
import { hubspotProjectFiles } from '../connectors/hubspot/manifest/manifest.js';
import { HUBSPOT_NOTE_SCOPES, HUBSPOT_SCOPES } from '../connectors/hubspot/provider.js';
import type { LocalSystem } from '../local/system.js';
import { createPublicPagesRouter } from '../src/server/public-pages.js';
import { startTestSystem, stopTestSystem } from './support/local-system.js';

/**
 * The HubSpot listing's documentation and support URLs: HubSpot's review asks for a public setup guide (no
 * sign-in, specific to the app, with install and configuration steps) and URLs that answer 2xx and differ from
 * each other. They used to point at /admin, the operator's login.
 */

const APP_URL = 'https://connector.example.org';
const app = JSON.parse(hubspotProjectFiles({ appUrl: APP_URL })['src/app/app-hsmeta.json']!) as {
  config: { support: { supportEmail: string; documentationUrl: string; supportUrl: string } };
};
const support = app.config.support;

let server: ReturnType<express.Express['listen']>;
let origin = '';
beforeAll(async () => {
  const web = express();
  web.use(createPublicPagesRouter(APP_URL));
  await new Promise<void>((resolve) => {
    server = web.listen(0, '127.0.0.1', () => resolve());
  });
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
});

/** The listing URL's path, fetched from the test server without any cookie or token. */
async function open(listingUrl: string): Promise<{ status: number; type: string; body: string }> {
  const url = new URL(listingUrl);
  expect(url.origin).toBe(APP_URL);
  const res = await fetch(`${origin}${url.pathname}`, { redirect: 'manual' });
  return { status: res.status, type: res.headers.get('content-type') ?? '', body: await res.text() };
}

describe('the HubSpot listing links public pages', () => {
  it('names a setup guide and a support page on APP_URL, over HTTPS, distinct, neither of them the admin', () => {
    expect(support.documentationUrl).toBe(`${APP_URL}/docs/setup`);
    expect(support.supportUrl).toBe(`${APP_URL}/support`);
    for (const url of [support.documentationUrl, support.supportUrl]) {
      expect(url.startsWith('https://')).toBe(true);
      expect(new URL(url).pathname.startsWith('/admin')).toBe(false);
    }
    expect(support.documentationUrl).not.toBe(support.supportUrl);
  });

  it('serves the setup guide to anyone: install, scopes, configuration, use, uninstall and what stays', async () => {
    const page = await open(support.documentationUrl);
    expect(page.status).toBe(200);
    expect(page.type).toMatch(/^text\/html/);
    expect(page.body).toContain(`${APP_URL}/oauth/hubspot/install`);
    for (const scope of [...HUBSPOT_SCOPES, ...HUBSPOT_NOTE_SCOPES]) expect(page.body).toContain(scope);
    for (const heading of ['Install the app', 'Configure it', 'Use it', 'Disconnect or uninstall'])
      expect(page.body).toContain(heading);
    expect(page.body).toContain('Connected apps');
    expect(page.body).toContain('remain in HubSpot until you delete them');
    // Nothing of the operator's side leaks onto a public page.
    expect(page.body).not.toMatch(/\/admin\/(?!assets\/)/);
  });

  it('explains every scope the install asks for, and no other', () => {
    expect(HUBSPOT_SCOPE_PURPOSES.map((s) => s.scope)).toEqual([...HUBSPOT_SCOPES]);
  });

  it('serves the support page to anyone, with the address the listing names and a link to the guide', async () => {
    const page = await open(support.supportUrl);
    expect(page.status).toBe(200);
    expect(page.body).toContain(`mailto:${support.supportEmail}`);
    expect(support.supportEmail).toBe('support@connector.example.org');
    expect(page.body).toContain('href="/docs/setup"');
  });
});

describe('the public pages through the real server', () => {
  let system: LocalSystem | undefined;
  afterAll(async () => {
    await stopTestSystem(system);
  });

  it('answers both without a token or cookie, in the admin look, while the admin still asks for one', async () => {
    system = await startTestSystem({ companies: 1, logLevel: 'silent' });
    for (const path of ['/docs/setup', '/support']) {
      const res = await fetch(`${system.appUrl}${path}`, { redirect: 'manual' });
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      // The stylesheet the page links loads: the page's policy lets its own origin's styles in.
      expect(res.headers.get('content-security-policy')).toMatch(/style-src 'self'/);
      expect(await res.text()).toContain('/admin/assets/admin.css');
    }
    // The admin itself still asks for a sign-in.
    const admin = await fetch(`${system.appUrl}/admin/api/installations`, { redirect: 'manual' });
    expect(admin.status).toBe(401);
  }, 120_000);
});
