import { type Browser, chromium, type Page } from 'playwright-core';
import type { LocalSystem, LocalSystemOptions } from '../../local/system.js';
import { startTestSystem, stopTestSystem } from './local-system.js';
import { runEnded } from './system-state.js';

/**
 * The admin page in Debian's Chromium (`/usr/bin/chromium`, never a downloaded one) through playwright-core:
 * pages of a given width that record every Content Security Policy violation the browser reports, and the
 * sign-in through the page's form.
 */

const CHROMIUM = '/usr/bin/chromium';

export interface BrowserSession {
  /**
   * A new page `width` x `height` px; its CSP violations land in `cspViolations`. `script: false` turns the
   * page's JavaScript off (what the page does without its script).
   */
  newPage(width: number, height?: number, options?: { script?: boolean }): Promise<Page>;
  /** Signs in through the login form with the system's admin token and waits for the installations page. */
  logIn(page: Page): Promise<void>;
  /** The console messages of every page that name the Content Security Policy. */
  readonly cspViolations: string[];
  close(): Promise<void>;
}

export async function openBrowserSession(system: LocalSystem): Promise<BrowserSession> {
  const browser: Browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  const cspViolations: string[] = [];
  return {
    cspViolations,
    async newPage(width, height = 900, options = {}) {
      const page = await browser.newPage({
        viewport: { width, height },
        javaScriptEnabled: options.script ?? true,
      });
      page.on('console', (m) => {
        if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
      });
      return page;
    },
    async logIn(page) {
      await page.goto(`${system.appUrl}/admin/login`);
      await page.getByLabel('Admin token').fill(system.ctx.config.adminToken);
      await page.keyboard.press('Enter');
      await page.waitForURL(`${system.appUrl}/admin`);
      await page.getByRole('heading', { name: 'Installations', level: 1 }).waitFor();
    },
    close: () => browser.close(),
  };
}

/** A system under test whose first sync has ended, and a browser session on it. */
export interface SystemInBrowser {
  system: LocalSystem;
  browser: BrowserSession;
}

export async function startSystemInBrowser(
  options: Omit<LocalSystemOptions, 'prefix'> = {},
): Promise<SystemInBrowser> {
  const system = await startTestSystem(options);
  try {
    await runEnded(system);
    return { system, browser: await openBrowserSession(system) };
  } catch (error) {
    // The caller never sees this system: it is closed here, keys and all.
    await stopTestSystem(system);
    throw error;
  }
}

/** Closes the browser, then the system (deleting its keys); safe after a start that failed part way. */
export async function stopSystemInBrowser(started: Partial<SystemInBrowser>): Promise<void> {
  await started.browser?.close();
  await stopTestSystem(started.system);
}
