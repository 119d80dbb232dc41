import { mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSystem } from '../local/system.js';
import { topTied } from '../src/admin/mass-actions.js';
import type { ReviewItem } from '../src/storage/review-codec.js';
import { type BrowserSession, startSystemInBrowser, stopSystemInBrowser } from './support/browser-session.js';

/**
 * The operator's day by keyboard in Chromium, on the demo's own seed: after a single decision the page comes
 * back to the same search and page with the message in view, naming the company, and focus on the next item's
 * first action; a single unlink is confirmed first; a bulk accept leaves the tie alone.
 */

let system: LocalSystem;
let browser: BrowserSession;

beforeAll(async () => {
  mkdirSync('test-artifacts', { recursive: true });
  ({ system, browser } = await startSystemInBrowser({ companies: 300 }));
}, 180_000);

afterAll(() => stopSystemInBrowser({ system, browser }));

const tabUrl = (tab: string, query = '') =>
  `${system.appUrl}/admin/installations/${system.installationId}/${tab}${query}`;

// Run in the page (the test's own types know no DOM).
const VISIBLE = `function visible(el) {
  if (!el) return false;
  const box = el.getBoundingClientRect();
  return box.top >= 0 && box.bottom <= window.innerHeight && box.height > 0;
}`;

/** The element's box lies within the viewport. */
async function inView(page: Page, selector: string): Promise<boolean> {
  return page.evaluate<boolean>(`(${VISIBLE})(document.querySelector(${JSON.stringify(selector)}))`);
}

/** The focused element's id, and whether it is in view. */
async function focused(page: Page): Promise<{ id: string; visible: boolean }> {
  return page.evaluate<{ id: string; visible: boolean }>(
    `({ id: document.activeElement?.id ?? '', visible: (${VISIBLE})(document.activeElement) })`,
  );
}

/** Waits until the element of this id has focus. */
async function focusOn(page: Page, id: string): Promise<void> {
  await page.waitForFunction(`document.activeElement?.id === ${JSON.stringify(id)}`);
}

/** The record ids of the review items shown. */
async function shownItems(page: Page): Promise<string[]> {
  return page.evaluate<string[]>(
    `[...document.querySelectorAll('input[type="checkbox"][form="review-bulk"]')].map((el) => el.value)`,
  );
}

const activeText = (page: Page) => page.evaluate<string>(`document.activeElement?.textContent ?? ''`);

async function queue(): Promise<ReviewItem[]> {
  return system.ctx.index.reviews.items(system.installationId);
}

describe('the operator’s day by keyboard', () => {
  it('the demo’s review queue holds decisions worth making: 10 names or more, with one true tie', async () => {
    const items = await queue();
    expect(items.length).toBe(30);
    expect(new Set(items.map((i) => i.name)).size).toBeGreaterThanOrEqual(10);
    expect(items.filter((i) => i.industry).length).toBe(items.length);
    expect(items.filter((i) => topTied(i)).map((i) => i.name)).toEqual(['Lindqvist Shipwrights']);
  });

  it('accepts from a search: the search kept, the message names the company in view, focus on the next item', async () => {
    const page = await browser.newPage(1280);
    await browser.logIn(page);
    await page.goto(tabUrl('review'));
    // Search by keyboard.
    await page.getByRole('searchbox', { name: 'Search review queue' }).focus();
    await page.keyboard.type('Thornquist');
    await page.keyboard.press('Enter');
    await page.waitForURL(/q=Thornquist/);
    const found = (await queue()).filter((i) => i.name === 'Thornquist Ceramics');
    expect(found.length).toBeGreaterThanOrEqual(2);
    const ids = await shownItems(page);
    expect(ids.length).toBe(found.length);
    const [first, second] = ids as [string, string];
    const item = found.find((i) => i.recordId === first)!;
    // The record's industry picks one of its namesakes: accept that one by keyboard.
    const wanted = item.candidates.find((c) => c.industry === item.industry)!;
    const accept = page.getByRole('button', {
      name: `Accept ${wanted.name} (${wanted.slug}) for Thornquist Ceramics, record ${first}`,
    });
    await accept.focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(/done=review-linked/);
    const url = new URL(page.url());
    expect(url.searchParams.get('q')).toBe('Thornquist');
    expect(url.searchParams.get('record')).toBe(first);
    // The anchor is the next item's first action: the browser focuses it, with or without the script.
    expect(url.hash).toBe(`#act-${second}`);
    const message = page.locator('[data-done-notice]');
    await message.waitFor();
    expect(await message.textContent()).toContain(
      `Linked Thornquist Ceramics (record ${first}) to ${wanted.slug}`,
    );
    expect(await message.getAttribute('role')).toBe('status');
    expect(await inView(page, '[data-done-notice]')).toBe(true);
    // Focus on the next item's first action, in view: no 24 Tabs from the top.
    await focusOn(page, `act-${second}`);
    expect(await focused(page)).toEqual({ id: `act-${second}`, visible: true });
    expect(system.hubspot.getCompany(first)!.properties).toMatchObject({
      report_slug: wanted.slug,
      report_link_source: 'admin',
    });
    await page.screenshot({ path: 'test-artifacts/keyboard-accept.png' });
    await page.close();
  }, 60_000);

  it('keeps the page of the queue after a reject on page 2', async () => {
    const page = await browser.newPage(1280);
    await browser.logIn(page);
    await page.goto(tabUrl('review', '?page=2#review'));
    const ids = await shownItems(page);
    expect(ids.length).toBeGreaterThan(2);
    await page
      .getByRole('button', { name: new RegExp(`^Reject all candidates for .*, record ${ids[0]}$`) })
      .focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(/done=review-rejected/);
    expect(new URL(page.url()).searchParams.get('page')).toBe('2');
    await page.getByText(/^Page 2 of/).waitFor();
    expect(await page.locator('[data-done-notice]').textContent()).toMatch(
      new RegExp(`Rejected the candidates of .+ \\(record ${ids[0]}\\)`),
    );
    expect(await inView(page, '[data-done-notice]')).toBe(true);
    await focusOn(page, `act-${ids[1]}`);
    expect((await focused(page)).visible).toBe(true);
    expect(system.hubspot.getCompany(ids[0]!)!.properties.report_match_status).toBe('no_match');
    await page.close();
  }, 60_000);

  it('without the page’s script, the redirect’s anchor alone focuses the next item, the message above it', async () => {
    const page = await browser.newPage(1280, 900, { script: false });
    await browser.logIn(page);
    await page.goto(tabUrl('review', '#review'));
    const ids = await shownItems(page);
    expect(ids.length).toBeGreaterThan(3);
    const [decided, next] = ids as [string, string];
    await page
      .getByRole('button', { name: new RegExp(`^Reject all candidates for .*, record ${decided}$`) })
      .focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(/done=review-rejected/);
    expect(new URL(page.url()).hash).toBe(`#act-${next}`);
    await focusOn(page, `act-${next}`);
    expect((await focused(page)).visible).toBe(true);
    expect(await inView(page, '[data-done-notice]')).toBe(true);
    // The select-all box is the script's: hidden without it, so this page really ran none.
    expect(await page.locator('[data-select-all-box]').isHidden()).toBe(true);
    await page.close();
  }, 60_000);

  it('at 400 px too, the message and the focused next action are both in view', async () => {
    const page = await browser.newPage(400);
    await browser.logIn(page);
    await page.goto(tabUrl('review', '#review'));
    const ids = await shownItems(page);
    expect(ids.length).toBeGreaterThan(3);
    const [, decided, next] = ids as [string, string, string];
    await page
      .getByRole('button', { name: new RegExp(`^Reject all candidates for .*, record ${decided}$`) })
      .focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(/done=review-rejected/);
    await focusOn(page, `act-${next}`);
    await page.waitForFunction(`(${VISIBLE})(document.querySelector('[data-done-notice]'))`);
    expect(await focused(page)).toEqual({ id: `act-${next}`, visible: true });
    // Not under the sticky bulk bar either.
    const covered = await page.evaluate<boolean>(
      `document.querySelector('.bulk-form').getBoundingClientRect().bottom > document.querySelector('[data-done-notice]').getBoundingClientRect().top`,
    );
    expect(covered).toBe(false);
    await page.screenshot({ path: 'test-artifacts/keyboard-reject-400.png' });
    await page.close();
  }, 60_000);

  it('confirms a single unlink, keeps the link on “Keep the link”, and focuses the next row after it', async () => {
    const page = await browser.newPage(1280);
    await browser.logIn(page);
    await page.goto(tabUrl('links', '?linked-page=2#linked-records'));
    const rows = await page
      .locator('section[aria-labelledby="corrections"] tbody button[id^="act-"]')
      .evaluateAll((els) => els.map((el) => (el as unknown as { id: string }).id.slice('act-'.length)));
    expect(rows.length).toBeGreaterThan(3);
    const [kept, target, next] = rows.slice(3) as [string, string, string];
    const slugOf = (id: string) => system.hubspot.getCompany(id)!.properties.report_slug;
    const slug = slugOf(kept);
    expect(slug).toBeTruthy();

    // Unlink, then keep the link: nothing changes, and the page is where it was.
    await page.locator(`#act-${kept}`).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: /^Unlink .+\?$/ }).waitFor();
    expect((await focused(page)).visible).toBe(true);
    expect(await activeText(page)).toMatch(/^Unlink /);
    await page.keyboard.press('Tab');
    expect(await activeText(page)).toBe('Keep the link');
    await page.keyboard.press('Enter');
    await page.waitForURL(/linked-page=2/);
    expect(slugOf(kept)).toBe(slug);

    // Unlink for real: confirmed, then the message names it, in view, and focus is on the next row's Unlink.
    const targetSlug = slugOf(target);
    const name = system.hubspot.getCompany(target)!.properties.name;
    await page.locator(`#act-${target}`).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: `Unlink ${name}?` }).waitFor();
    await page.getByText(targetSlug!, { exact: true }).waitFor();
    await page.keyboard.press('Enter');
    await page.waitForURL(/done=unlinked/);
    expect(new URL(page.url()).searchParams.get('linked-page')).toBe('2');
    const message = page.locator('[data-done-notice]');
    expect(await message.textContent()).toContain(`Unlinked ${name} (record ${target})`);
    expect(await inView(page, '[data-done-notice]')).toBe(true);
    await focusOn(page, `act-${next}`);
    expect((await focused(page)).visible).toBe(true);
    expect(system.hubspot.getCompany(target)!.properties).toMatchObject({
      report_match_status: 'no_match',
      report_link_source: 'admin',
    });
    expect(slugOf(target)).toBeFalsy();
    await page.screenshot({ path: 'test-artifacts/keyboard-unlink.png' });
    await page.close();
  }, 60_000);

  it('a bulk accept of the whole queue leaves the tie alone, and says so in view', async () => {
    const before = await queue();
    const tied = before.filter((i) => topTied(i));
    expect(tied.length).toBe(1);
    const page = await browser.newPage(1280);
    await browser.logIn(page);
    await page.goto(tabUrl('review', '?per=100#review'));
    await page.getByLabel(`Select all ${before.length} on this page`).focus();
    await page.keyboard.press('Space');
    await page.getByText(`${before.length} selected.`).waitFor();
    await page.getByRole('button', { name: 'Accept the first candidate of each selected' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: `${before.length - 1} records would change` }).waitFor();
    // The wording of the reason may change; the count and the tie may not.
    await page.getByText(/1 left alone: .*(tied|score the same)|1 tied/i).waitFor();
    await page.getByRole('button', { name: /^Accept them/ }).focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(/done=mass&mass=/);
    expect(new URL(page.url()).searchParams.get('per')).toBe('100');
    await page.locator('[data-done-notice]').filter({ hasText: 'Accepted' }).waitFor();
    expect(await inView(page, '[data-done-notice]')).toBe(true);
    const after = await queue();
    expect(after.map((i) => i.recordId)).toEqual(tied.map((i) => i.recordId));
    expect(system.hubspot.getCompany(tied[0]!.recordId)!.properties.report_match_status).toBe('needs_review');
    await page.close();
  }, 90_000);

  it('a crafted link names no record the installation does not know: the fixed sentence instead', async () => {
    const page = await browser.newPage(1280);
    await browser.logIn(page);
    await page.goto(tabUrl('review', '?done=review-linked&record=Call-555-0100-now#done'));
    const message = page.locator('[data-done-notice]');
    expect(await message.textContent()).toBe('Linked: the report was written to the CRM record.');
    await page.close();
  });

  it('ran without a content security policy violation', () => {
    expect(browser.cspViolations).toEqual([]);
  });
});
