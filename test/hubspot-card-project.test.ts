import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  HUBSPOT_CARD_DEPENDENCIES,
  HUBSPOT_CARD_ENTRYPOINT,
  HUBSPOT_CARD_SOURCE_DIR,
  HUBSPOT_CARD_SOURCES,
} from '../connectors/hubspot/manifest/card-files.js';
import { hubspotProjectFiles } from '../connectors/hubspot/manifest/manifest.js';
import { generatedMarkText } from '../src/crm/generated-mark.js';

/**
 * The app card as the HubSpot project holds it: two card components (company record tab and sidebar) drawn by
 * one entry file, the card's sources copied unchanged (a generated mark above them), the connector's URL
 * written in, and the whole card bundled with esbuild from the generated project (what HubSpot's build does at
 * upload), so a card that does not bundle fails here and in CI.
 */

const ROOT = join(import.meta.dirname, '..');
const APP_URL = 'https://crm.acme.test';
const files = hubspotProjectFiles({ appUrl: APP_URL });

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hs-card-'));
  for (const [relative, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, relative)), { recursive: true });
    await writeFile(join(dir, relative), content, 'utf8');
  }
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function bundle(projectDir: string) {
  return build({
    entryPoints: [join(projectDir, 'src', HUBSPOT_CARD_ENTRYPOINT)],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    jsx: 'automatic',
    // The generated project has no node_modules of its own here: its package.json's packages come from ours.
    nodePaths: [join(ROOT, 'node_modules')],
    logLevel: 'silent',
  });
}

describe('the app card in the HubSpot project', () => {
  it('declares a card on the company record tab and one in its sidebar, both drawn by the entry file', () => {
    const tab = JSON.parse(files['src/app/cards/report-card-tab-hsmeta.json']!);
    const sidebar = JSON.parse(files['src/app/cards/report-card-sidebar-hsmeta.json']!);
    for (const card of [tab, sidebar]) {
      expect(card.type).toBe('card');
      expect(card.config.objectTypes).toEqual(['companies']);
      expect(card.config.entrypoint).toBe(HUBSPOT_CARD_ENTRYPOINT);
      expect(files[`src${card.config.entrypoint}`], 'the entry file is in the project').toBeDefined();
    }
    expect([tab.config.location, sidebar.config.location]).toEqual(['crm.record.tab', 'crm.record.sidebar']);
    expect(new Set([tab.uid, sidebar.uid]).size).toBe(2);
  });

  it("copies the card's sources unchanged but for the generated mark, and writes the connector's URL it calls", () => {
    for (const name of HUBSPOT_CARD_SOURCES) {
      const source = `${HUBSPOT_CARD_SOURCE_DIR}/${name}`;
      expect(files[`src/app/cards/${name}`], name).toBe(
        `// ${generatedMarkText({ copyOf: source })}\n${readFileSync(join(ROOT, source), 'utf8')}`,
      );
    }
    expect(files['src/app/cards/app-url.ts']).toContain(`export const APP_URL = "${APP_URL}";`);
    const app = JSON.parse(files['src/app/app-hsmeta.json']!);
    // The card calls nothing; it opens the connector's sign-in page in HubSpot's iframe modal.
    expect(app.config.permittedUrls.fetch).toEqual([]);
    expect(app.config.permittedUrls.iframe).toEqual([APP_URL]);
  });

  it("lists the card's packages with the repository's own version ranges", () => {
    const cards = JSON.parse(files['src/app/cards/package.json']!);
    const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    expect(cards.dependencies).toEqual(HUBSPOT_CARD_DEPENDENCIES);
    for (const [name, range] of Object.entries(HUBSPOT_CARD_DEPENDENCIES)) {
      expect(root.dependencies[name] ?? root.devDependencies[name], name).toBe(range);
    }
  });

  it('bundles from the generated project, with the URL written in', async () => {
    const result = await bundle(dir);
    expect(result.errors).toEqual([]);
    const code = result.outputFiles[0]!.text;
    expect(code).toContain(APP_URL);
    expect(code).toContain('/oauth/hubspot-card');
    expect(code).not.toContain('/cards/hubspot/companies/');
    expect(code).not.toContain('@hubspot/ui-extensions/testing');
  }, 60_000);

  it('fails to bundle a card whose source is broken, so the check above can fail', async () => {
    const broken = await mkdtemp(join(tmpdir(), 'hs-card-broken-'));
    try {
      for (const [relative, content] of Object.entries(files)) {
        await mkdir(dirname(join(broken, relative)), { recursive: true });
        await writeFile(join(broken, relative), content, 'utf8');
      }
      await rm(join(broken, 'src', 'app', 'cards', 'card-text.ts'));
      await expect(bundle(broken)).rejects.toThrow(/card-text/);
    } finally {
      await rm(broken, { recursive: true, force: true });
    }
  }, 60_000);
});
