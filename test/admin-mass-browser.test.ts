import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSystem } from '../local/system.js';
import { adminRequest } from './support/admin-api.js';
import { type BrowserSession, startSystemInBrowser, stopSystemInBrowser } from './support/browser-session.js';

/**
 * Mass actions in Chromium (issue 31): the bulk buttons are disabled while nothing is selected (and an empty
 * selection posted anyway is answered with a sentence on the same page, not an error page); a bulk decision
 * shows its count and records, then a confirmation bound to that set (a set that changed in between is shown
 * again, nothing done); the page comes back to the same review page; a run's links are undone through the
 * confirmation and put back from the decision log's "Undo this".
 */

let system: LocalSystem;
let browser: BrowserSession;

beforeAll(async () => {
  mkdirSync('test-artifacts', { recursive: true });
  ({ system, browser } = await startSystemInBrowser({ companies: 300 }));
}, 180_000);

afterAll(() => stopSystemInBrowser({ system, browser }));

const reviewUrl = (query = '') =>
  `${system.appUrl}/admin/installations/${system.installationId}/review${query}#review`;

describe('mass actions in a browser', () => {
  it('disables the bulk buttons while nothing is selected; an empty selection posted anyway is explained', async () => {
    const page = await browser.newPage(1280);
    await browser.logIn(page);
    await page.goto(reviewUrl('?page=2'));
    const accept = page.getByRole('button', { name: 'Accept the first candidate of each selected' });
    const reject = page.getByRole('button', { name: 'Reject every candidate of each selected' });
    expect(await accept.isDisabled()).toBe(true);
    expect(await reject.isDisabled()).toBe(true);
    const boxes = page.locator('input[type="checkbox"][form="review-bulk"]');
    await boxes.first().check();
    expect(await accept.isEnabled()).toBe(true);
    await boxes.first().uncheck();
    expect(await accept.isDisabled()).toBe(true);

    // A browser without the script (or a crafted form) posts no selection: a sentence, on the same page.
    await page.evaluate(
      'document.querySelectorAll("#review-bulk button").forEach((b) => { b.disabled = false; })',
    );
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.url().includes('page=2')),
      accept.click(),
    ]);
    expect(answer.status()).toBe(200);
    expect(page.url()).toMatch(/\?page=2&done=review-bulk-empty#review$/);
    await page.getByRole('status').filter({ hasText: 'Nothing was selected' }).waitFor();
    await page.getByText('Page 2 of').first().waitFor();
    await page.close();
  }, 60_000);

  it('confirms a bulk reject for the set shown, says when the set changed, and keeps the review page', async () => {
    const queue = await system.ctx.index.reviews.items(system.installationId);
    expect(queue.length).toBeGreaterThan(12);
    const page = await browser.newPage(1280);
    await browser.logIn(page);
    await page.goto(reviewUrl('?page=2'));
    const boxes = page.locator('input[type="checkbox"][form="review-bulk"]');
    const chosen = await boxes.evaluateAll((els) =>
      els.slice(0, 3).map((el) => (el as unknown as { value: string }).value),
    );
    for (const box of (await boxes.all()).slice(0, 3)) await box.check();
    await page.getByRole('button', { name: 'Reject every candidate of each selected' }).click();
    await page.getByRole('heading', { name: '3 records would change' }).waitFor();
    for (const id of chosen) await page.getByRole('link', { name: id, exact: true }).waitFor();
    await page.screenshot({ path: 'test-artifacts/mass-confirm.png' });
    // Nothing is done by showing it.
    expect(await system.ctx.index.statusesOf(system.installationId, chosen)).toEqual([
      'needs_review',
      'needs_review',
      'needs_review',
    ]);

    // Someone decides one of them meanwhile: the confirmation no longer names the set.
    const decided = await adminRequest(
      system,
      `/admin/api/installations/${system.installationId}/review/${chosen[0]}`,
      { bearer: true, json: { action: 'reject' } },
    );
    expect(decided.status).toBe(200);
    await page.getByRole('button', { name: /^Reject them/ }).click();
    await page.getByText('The set changed since it was shown').waitFor();
    await page.getByRole('heading', { name: '2 records would change' }).waitFor();
    await page.getByRole('button', { name: /^Reject them \(2\)/ }).click();

    await page.waitForURL(/\?page=2&done=mass&mass=m[a-z0-9]+#review$/);
    await page.getByRole('status').filter({ hasText: 'Rejected: 2 records' }).waitFor();
    await page.getByText('Page 2 of').first().waitFor();
    for (const id of chosen)
      expect(system.hubspot.getCompany(id)!.properties.report_link_source).toBe('admin');
    await page.close();
  }, 60_000);

  it('undoes a run’s links through the confirmation and puts them back from the decision log', async () => {
    const state = () =>
      system.recordIds.map((id) => {
        const r = system.crm.record(id)!;
        return `${id}|${r.slug}|${r.status}|${r.linkSource}|${r.score}`;
      });
    const before = state();
    const page = await browser.newPage(1280);
    await browser.logIn(page);
    await page.goto(`${system.appUrl}/admin/installations/${system.installationId}/links#corrections`);
    await page
      .getByRole('button', { name: /^Undo its links/ })
      .last()
      .click();
    const heading = page.getByRole('heading', { name: /records would change$/ });
    await heading.waitFor();
    const count = Number(await heading.getAttribute('data-mass-count'));
    expect(count).toBeGreaterThan(20);
    // The first 20 records, with the slug each would lose.
    expect(await page.locator('table tbody tr').count()).toBe(20);
    await page.getByRole('button', { name: `Undo these links (${count})` }).click();
    await page.waitForURL(/done=mass&mass=/);
    await page
      .getByRole('status')
      .filter({ hasText: `Undone: ${count} records lost the sync’s link` })
      .waitFor();
    const unlinked = system.recordIds.filter((id) => system.crm.record(id)?.linkSource === 'admin');
    expect(unlinked.length).toBeGreaterThanOrEqual(count);

    // "Undo this" on the logged action (each entry of it carries one) and in the list of mass actions.
    const mass = page.locator('section[aria-labelledby="mass-actions"]');
    // This undo and the bulk reject above.
    expect(await mass.getByRole('button', { name: /^Undo this…/ }).count()).toBe(2);
    await page.evaluate('document.getElementById("decisions").scrollIntoView()');
    await page.screenshot({ path: 'test-artifacts/mass-actions.png' });
    const log = page.locator('section[aria-labelledby="decisions"]');
    await log
      .getByRole('row')
      .filter({ hasText: 'Undid a sync’s link' })
      .first()
      .getByRole('button', { name: /^Undo this…/ })
      .click();
    await page.getByRole('heading', { name: `${count} records would change` }).waitFor();
    await page.getByRole('button', { name: `Put these back (${count})` }).click();
    await page.waitForURL(/done=mass&mass=.*#mass-actions$/);
    await page
      .getByRole('status')
      .filter({ hasText: `Undone: ${count} records got back the link` })
      .waitFor();
    // Every record the run linked is back as it was: slug, status, source and score.
    expect(state()).toEqual(before);
    await page.close();
  }, 90_000);

  it('ran without a content security policy violation', () => {
    expect(browser.cspViolations).toEqual([]);
  });
});
