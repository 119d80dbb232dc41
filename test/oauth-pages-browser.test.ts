import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSystem } from '../local/system.js';
import { type BrowserSession, startSystemInBrowser, stopSystemInBrowser } from './support/browser-session.js';

/**
 * The OAuth result pages in Chromium, on the Salesforce demo (issue 31): its local org's OAuth server installs
 * the app through the real routes, the result page has the admin's look and says what comes next, the admin
 * page it points to tells a CRM admin without the token why they see a login, and the operator who logs in
 * lands on the installation's news. The CRM whose app is not configured names what is missing.
 */

let system: LocalSystem;
let browser: BrowserSession;

beforeAll(async () => {
  mkdirSync('test-artifacts', { recursive: true });
  ({ system, browser } = await startSystemInBrowser({ crm: 'salesforce', companies: 20 }));
}, 180_000);

afterAll(() => stopSystemInBrowser({ system, browser }));

describe('OAuth result pages', () => {
  it('installs through the local org, shows the next steps and explains the login it leads to', async () => {
    const before = await system.ctx.installations.get(system.installationId);
    expect(before?.mode).toBe('token');
    const page = await browser.newPage(1280);
    await page.goto(`${system.appUrl}/oauth/salesforce/install`);
    // The org was connected in token mode by the demo: installing it through OAuth is a reconnect.
    await page.getByRole('heading', { name: 'Salesforce is reconnected', level: 1 }).waitFor();
    expect(page.url()).toContain('/oauth/salesforce/callback');
    // The admin's look: its stylesheet and header, a status box, the next steps.
    // (A string: the test compiles without the DOM library.)
    expect(
      await page.evaluate<string>('getComputedStyle(document.querySelector(".skip-link")).position'),
    ).toBe('absolute');
    expect(await page.locator('header.site-header').count()).toBe(1);
    expect(await page.getByRole('status').textContent()).toMatch(/connected again/);
    await page.getByRole('heading', { name: 'Next steps' }).waitFor();
    // docs/admin.md shows this page (refreshed with UPDATE_DOCS_SCREENSHOTS=1).
    await page.screenshot({
      path: process.env.UPDATE_DOCS_SCREENSHOTS
        ? 'docs/images/oauth-connected.png'
        : 'test-artifacts/oauth-connected.png',
    });
    const after = await system.ctx.installations.get(system.installationId);
    expect(after?.mode).toBe('oauth');
    expect(after?.status).toBe('connected');

    // A CRM admin follows the link and meets the token login: it says why.
    await page.getByRole('link', { name: 'Open it on the admin page' }).click();
    await page.getByLabel('Admin token').waitFor();
    const why = (await page.getByRole('status').textContent()) ?? '';
    expect(why).toContain('The app is reconnected: nothing more is needed in the CRM');
    expect(why).not.toContain(system.installationId);
    expect(why).toContain('ADMIN_TOKEN');

    // The operator logs in and lands on the installations with the news.
    await page.getByLabel('Admin token').fill(system.ctx.config.adminToken);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Installations', level: 1 }).waitFor();
    expect(await page.getByRole('status').first().textContent()).toMatch(
      new RegExp(`Installation ${system.installationId} is reconnected`),
    );
    await page.close();
  });

  it('the install route of a CRM without an app names its variables, as a page and as JSON', async () => {
    const page = await browser.newPage(1280);
    const res = await page.goto(`${system.appUrl}/oauth/hubspot/install`);
    expect(res?.status()).toBe(503);
    await page.getByRole('heading', { name: 'HubSpot install is not configured' }).waitFor();
    expect(await page.getByRole('alert').textContent()).toMatch(
      /HUBSPOT_CLIENT_ID and HUBSPOT_CLIENT_SECRET are not set/,
    );
    await page.close();
    const json = await fetch(`${system.appUrl}/oauth/hubspot/install`, { redirect: 'manual' });
    expect(json.status).toBe(503);
    expect(await json.json()).toMatchObject({
      code: 'OAUTH_NOT_CONFIGURED',
      missing: ['HUBSPOT_CLIENT_ID', 'HUBSPOT_CLIENT_SECRET'],
    });
  });

  it('ran without a content security policy violation', () => {
    expect(browser.cspViolations).toEqual([]);
  });
});
