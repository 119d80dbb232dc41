import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createRenderer, type RenderedChildNode, RenderedNodeType } from '@hubspot/ui-extensions/testing';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CARD_SAMPLES, type CardSampleName } from '../connectors/hubspot/card/ui/card-samples.js';
import { type CardState, CardView } from '../connectors/hubspot/card/ui/ReportCard.js';
import { PREVIEW_PATH } from '../local/preview/page.js';
import type { LocalSystem } from '../local/system.js';
import { startTestSystem, stopTestSystem } from './support/local-system.js';

/**
 * The demo's component preview (/preview/components) in Debian's Chromium: each state of the HubSpot card
 * shows the text HubSpot's test renderer gives for it (what test/hubspot-card.test.tsx reads), each state of
 * the Salesforce component shows the text its Jest tests read (test/lwc/state-texts.test.js, run here), every
 * state is labelled as a preview, and the README's pictures of both are taken from this page.
 */

const CHROMIUM = '/usr/bin/chromium';
const ROOT = join(import.meta.dirname, '..');
const IMAGES = join(ROOT, 'docs', 'images');
const LWC_TEXTS = join(ROOT, 'test-artifacts', 'lwc-state-texts.json');

/** What a seller reads of a rendered card node: its text, and the props HubSpot shows as words. */
function shownWords(node: RenderedChildNode): string[] {
  if (node.nodeType === RenderedNodeType.Text) return [node.text];
  const props = node.props as Record<string, unknown>;
  const children = node.childNodes.flatMap(shownWords);
  switch (node.name) {
    case 'ProgressBar':
      return [String(props.title), String(props.valueDescription)];
    case 'Alert':
      return [String(props.title), ...children];
    case 'LoadingSpinner':
      return [String(props.label)];
    case 'ToggleGroup': {
      const options = props.options as { label: string; description?: string }[];
      return [String(props.label), ...options.flatMap((o) => [o.label, o.description ?? ''])];
    }
    default:
      return children;
  }
}

const squeeze = (text: string) => text.replace(/\s+/g, ' ').trim();

function rendererText(state: CardState): string {
  const root = createRenderer('crm.record.tab').render(<CardView state={state} />);
  return squeeze(root.childNodes.flatMap(shownWords).join(' '));
}

let system: LocalSystem;
let browser: Browser;
let page: Page;
let lwcTexts: Record<string, string>;
/** The text checks that passed: the README's pictures are taken only of a page whose texts match. */
const matched = new Set<string>();

beforeAll(async () => {
  // The Jest side first: the component's states as the Jest tests render them, written to test-artifacts/.
  await promisify(execFile)(
    join(ROOT, 'node_modules', '.bin', 'jest'),
    ['--config', '../../test/lwc/jest.config.cjs', 'state-texts'],
    { cwd: join(ROOT, 'manifests', 'salesforce') },
  );
  lwcTexts = JSON.parse(readFileSync(LWC_TEXTS, 'utf8')) as Record<string, string>;
  system = await startTestSystem({ companies: 3, firstSync: false, workers: 0 });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  await page.goto(`${system.appUrl}${PREVIEW_PATH}`);
  await page.waitForSelector('body[data-ready]');
  expect(await page.getAttribute('body', 'data-ready')).toBe('true');
  expect(problems).toEqual([]);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stopTestSystem(system);
});

describe('the component preview page', () => {
  it('shows each card state with the text the test renderer gives for it', async () => {
    const names = Object.keys(CARD_SAMPLES) as CardSampleName[];
    const frames = await page.locator('[data-card-state]').all();
    const shown = await Promise.all(
      frames.map(
        async (f) =>
          // biome-ignore lint/performance/useDomNodeTextContent: the text as rendered (a line per block) is the point
          [(await f.getAttribute('data-card-state')) ?? '', await f.innerText()] as const,
      ),
    );
    expect(shown.map(([name]) => name)).toEqual(names);
    for (const [name, text] of shown) {
      const state = CARD_SAMPLES[name as CardSampleName];
      expect(squeeze(text), name).toBe(rendererText(state));
    }
    matched.add('card');
  });

  it('shows each state of the Salesforce component with the text its Jest tests read', async () => {
    const names = await Promise.all(
      (await page.locator('[data-lwc-state]').all()).map(
        async (e) => (await e.getAttribute('data-lwc-state')) ?? '',
      ),
    );
    expect(names).toEqual(Object.keys(lwcTexts));
    for (const name of names) {
      // The page's own reader is the Jest tests' stateText (report-score-states.js), over what the page shows.
      const text = await page.evaluate(`window.lwcStateText(${JSON.stringify(name)})`);
      expect(text, name).toBe(lwcTexts[name]);
    }
    matched.add('lwc');
  });

  it('labels every state as a preview', async () => {
    const figures = await page.locator('figure.state .state-label').allTextContents();
    expect(figures).toHaveLength(Object.keys(CARD_SAMPLES).length + Object.keys(lwcTexts).length);
    for (const label of figures) expect(label).toMatch(/^Preview: \w+$/);
    for (const id of ['hubspot-card-title', 'salesforce-lwc-title'])
      expect(await page.textContent(`#${id}`)).toMatch(/preview$/);
  });

  it("is linked from the demo's admin page", async () => {
    const answer = await fetch(`${system.appUrl}/admin`, {
      headers: { authorization: `Bearer ${system.ctx.config.adminToken}` },
    });
    expect(answer.status).toBe(200);
    expect(await answer.text()).toContain(`<a href="${PREVIEW_PATH}">`);
    expect(system.componentPreviewUrl).toBe(`${system.appUrl}${PREVIEW_PATH}`);
  });

  it("takes the README's pictures of both components (docs/images/preview-*.png)", async () => {
    expect([...matched].sort(), 'both text checks must pass first (run the whole file)').toEqual([
      'card',
      'lwc',
    ]);
    mkdirSync(IMAGES, { recursive: true });
    await page.locator('#hubspot-card').screenshot({ path: join(IMAGES, 'preview-hubspot-card.png') });
    await page.locator('#salesforce-lwc').screenshot({ path: join(IMAGES, 'preview-salesforce-lwc.png') });
  });
});
