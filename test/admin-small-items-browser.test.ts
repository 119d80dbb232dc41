import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSystem } from '../local/system.js';
import { MATCH_STATUSES } from '../src/fields.js';
import { installationView } from './support/admin-api.js';
import { type BrowserSession, startSystemInBrowser, stopSystemInBrowser } from './support/browser-session.js';

/**
 * Issue 31's smaller admin items in Chromium: the coverage chart's bars are shares of the whole, times read as
 * times (the exact instant kept in `<time datetime>`), an installation's own key can be given up for the
 * server's again, and the queue dashboard has a link back to the admin.
 */

let system: LocalSystem;
let browser: BrowserSession;

beforeAll(async () => {
  ({ system, browser } = await startSystemInBrowser({ companies: 60 }));
}, 180_000);

afterAll(() => stopSystemInBrowser({ system, browser }));

const ISO = /\d{4}-\d\d-\d\dT\d\d:\d\d/;

describe('smaller admin items (issue 31)', () => {
  it('draws each coverage bar as its share of the total, not of the largest bar', async () => {
    const page = await browser.newPage(1280);
    await browser.logIn(page);
    await page.goto(`${system.appUrl}/admin/installations/${system.installationId}`);
    const chart = page.getByRole('img', { name: 'Match coverage' });
    await chart.waitFor();
    const coverage = await system.ctx.index.coverage(system.installationId);
    const total = MATCH_STATUSES.reduce((s, k) => s + coverage[k], 0);
    const track = Number(await chart.locator('rect.chart-track').first().getAttribute('width'));
    const widths = await Promise.all(
      (await chart.locator('rect.chart-bar').all()).map(async (bar) =>
        Number(await bar.getAttribute('width')),
      ),
    );
    MATCH_STATUSES.forEach((status, i) => {
      const expected =
        coverage[status] === 0 ? 0 : Math.max(2, Math.round((coverage[status] / total) * track));
      expect(widths[i]).toBe(expected);
    });
    // The largest share is not drawn as a full track unless it is the whole.
    expect(Math.max(...widths)).toBeLessThan(track);
    await page.close();
  });

  it('shows times as times, with the exact instant in <time datetime>', async () => {
    const page = await browser.newPage(1280);
    await browser.logIn(page);
    for (const path of [`/admin/installations/${system.installationId}`, '/admin/events']) {
      await page.goto(`${system.appUrl}${path}`);
      const text = (await page.locator('main').textContent()) ?? '';
      expect(text).not.toMatch(ISO);
    }
    await page.goto(`${system.appUrl}/admin/installations/${system.installationId}`);
    const first = page.locator('main time').first();
    const datetime = (await first.getAttribute('datetime')) ?? '';
    expect(datetime).toMatch(ISO);
    expect(await first.getAttribute('title')).toBe(datetime);
    expect(await first.textContent()).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
    await page.close();
  });

  it("goes back to the server's key after one was saved for the installation", async () => {
    const page = await browser.newPage(1280);
    await browser.logIn(page);
    // The key form is on the installation's settings page.
    await page.goto(`${system.appUrl}/admin/installations/${system.installationId}/settings`);
    expect(await page.getByRole('button', { name: "Use the server's key again" }).count()).toBe(0);
    await page.getByLabel('Report-service API key').fill('sk_sandbox_read');
    await page.getByRole('button', { name: 'Check and save key' }).click();
    await page.waitForURL(/done=key-saved/);
    expect((await installationView(system)).reportKey.source).toBe('installation');
    await page.getByRole('button', { name: "Use the server's key again" }).click();
    await page.waitForURL(/done=key-server/);
    expect(await page.getByRole('status').first().textContent()).toMatch(/uses the server's key/);
    expect((await installationView(system)).reportKey.source).toBe('environment');
    expect(await system.ctx.installations.getReportsApiKey(system.installationId)).toBeNull();
    expect(await page.getByRole('button', { name: "Use the server's key again" }).count()).toBe(0);
    await page.close();
  });

  it('the queue dashboard links back to the admin', async () => {
    const page = await browser.newPage(1280);
    await browser.logIn(page);
    await page.goto(`${system.appUrl}/admin/queues`);
    const back = page.getByRole('link', { name: /Back to the admin/ });
    await back.waitFor();
    expect(await back.isVisible()).toBe(true);
    await back.click();
    await page.getByRole('heading', { name: 'Installations', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/admin');
    await page.close();
  });

  it('ran without a content security policy violation', () => {
    // bull-board's own page asks for Google's fonts, which its policy blocks (as before this issue): not ours.
    expect(browser.cspViolations.filter((v) => !v.includes('fonts.googleapis.com'))).toEqual([]);
  });
});
