import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSystem } from '../local/system.js';
import { MATCH_STATUSES, type MatchStatus } from '../src/fields.js';
import { type BrowserSession, startSystemInBrowser, stopSystemInBrowser } from './support/browser-session.js';

/**
 * The admin page in a real browser (Debian's Chromium, never a downloaded one): log in through the form, read
 * the coverage chart as a screen reader would, accept a review candidate with the keyboard, and check that the
 * local HubSpot record changed. Screenshots at 1280 and 400 px go to test-artifacts/.
 */

const ARTIFACTS = 'test-artifacts';
// The README's screenshots (docs/images/admin-1280.png, admin-400.png) are written over only when asked
// (UPDATE_DOCS_SCREENSHOTS=1), so a test run leaves the clone as it found it (docs/admin.md, "Screenshots").
const SCREENSHOTS = process.env.UPDATE_DOCS_SCREENSHOTS ? 'docs/images' : ARTIFACTS;
const LABELS: Record<MatchStatus, string> = {
  matched: 'Matched',
  needs_review: 'Needs review',
  no_match: 'No match',
  not_published: 'Not published',
  requested: 'Report requested',
  error: 'Error',
};

let system: LocalSystem;
let browser: BrowserSession;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  ({ system, browser } = await startSystemInBrowser({ companies: 300 }));
}, 180_000);

afterAll(() => stopSystemInBrowser({ system, browser }));

describe('the admin page in a browser', () => {
  it('logs in through the form and shows the coverage chart with the index numbers', async () => {
    const page = await browser.newPage(1280);
    await page.goto(`${system.appUrl}/admin`);
    expect(await page.getByLabel('Admin token').count()).toBe(1);
    await browser.logIn(page);
    // The first Tab lands on the skip link.
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement?.textContent?.trim()')).toBe('Skip to main content');

    const chart = page.getByRole('img', { name: 'Match coverage' });
    await chart.waitFor();
    const describedBy = await chart.getAttribute('aria-describedby');
    const description = (await page.locator(`[id="${describedBy}"]`).textContent()) ?? '';
    const coverage = await system.ctx.index.coverage(system.installationId);
    const total = MATCH_STATUSES.reduce((s, k) => s + coverage[k], 0);
    expect(total).toBe(300);
    for (const status of MATCH_STATUSES) {
      expect(description).toContain(`${LABELS[status]}: ${coverage[status]} (`);
    }
    // The same numbers are written as text beside the bars, for sighted readers without colour.
    const values = await chart.locator('text.chart-value').allTextContents();
    expect(values.map((v) => Number(v.split(' ')[0]))).toEqual(MATCH_STATUSES.map((s) => coverage[s]));
    await page.close();
  });

  it('accepts a review candidate with the keyboard and the CRM record changes', async () => {
    const page = await browser.newPage(1280);
    await browser.logIn(page);
    await page.getByRole('link', { name: /^Manage HubSpot portal/ }).click();
    // The overview links each of the installation's pages; the review queue is one of them.
    await page
      .getByRole('navigation', { name: 'Installation pages' })
      .getByRole('link', { name: /^Review/ })
      .click();
    await page.getByRole('heading', { name: /^Review queue/ }).waitFor();

    const first = page.locator('article.review-item').first();
    const headingId = (await first.locator('h3').getAttribute('id')) ?? '';
    const recordId = headingId.replace(/^review-/, '');
    const item = await system.ctx.index.reviews.item(system.installationId, recordId);
    expect(item).not.toBeNull();
    expect(system.hubspot.getCompany(recordId)?.properties.report_match_status).toBe('needs_review');
    const candidate = item!.candidates[item!.candidates.length - 1]!;

    const accept = first.getByRole('button', {
      name: `Accept ${candidate.name} (${candidate.slug}) for ${item!.name}, record ${recordId}`,
    });
    await accept.focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(/done=review-linked/);
    await expect.poll(() => page.getByRole('status').first().textContent()).toMatch(/Linked/);

    const record = system.hubspot.getCompany(recordId)!.properties;
    expect(record.report_slug).toBe(candidate.slug);
    expect(record.report_match_status).toBe('matched');
    expect(await page.locator(`[id="${headingId}"]`).count()).toBe(0);
    await page.close();
  });

  it('starts a sync from the page and follows its progress until it is done', async () => {
    const page = await browser.newPage(1280);
    await browser.logIn(page);
    await page.goto(`${system.appUrl}/admin/installations/${system.installationId}`);
    // Paused, the run stays in its first state long enough for the page to show it running.
    await system.ctx.queues.backfill.pause();
    try {
      await page.getByRole('button', { name: 'Sync now' }).focus();
      await page.keyboard.press('Enter');
      await page.waitForURL(/done=sync-started/);
      const [run] = await system.ctx.runs.recent(system.installationId, 1);
      expect(run?.state).toBe('listing');
      const row = page.locator(`tr[data-run-id="${run!.id}"]`);
      expect(await row.getAttribute('data-active')).toBe('true');
      expect(await row.locator('[data-field="state"]').textContent()).toBe('Listing records');
    } finally {
      await system.ctx.queues.backfill.resume();
    }
    const [run] = await system.ctx.runs.recent(system.installationId, 1);
    // The page's script polls the runs API and updates the row in place, without a reload.
    await page
      .locator(`tr[data-run-id="${run!.id}"] [data-field="state"]`)
      .filter({ hasText: 'Done' })
      .waitFor({ timeout: 60_000 });
    await page.getByText('A run has finished.').waitFor();
    expect(await page.locator(`tr[data-run-id="${run!.id}"]`).getAttribute('data-active')).toBe('false');
    await page.close();
  });

  it('reads well at 1280 and 400 px (screenshots in test-artifacts/, or docs/images when asked)', async () => {
    for (const width of [1280, 400]) {
      // Tall enough for the connection, key, charts and sync history; the review queue below runs on for pages.
      const page = await browser.newPage(width, 2000);
      await browser.logIn(page);
      await page.goto(`${system.appUrl}/admin/installations/${system.installationId}`);
      await page.getByRole('img', { name: 'Match coverage' }).waitFor();
      // Nothing may stick out sideways: a page that scrolls horizontally is broken at this width.
      // (A string: the test compiles without the DOM library.)
      const overflow = await page.evaluate<number>(
        'document.documentElement.scrollWidth - document.documentElement.clientWidth',
      );
      expect(overflow).toBeLessThanOrEqual(0);
      await page.screenshot({ path: `${SCREENSHOTS}/admin-${width}.png` });
      await page.close();
    }
  });

  it('ran without a content security policy violation', () => {
    expect(browser.cspViolations).toEqual([]);
  });
});
