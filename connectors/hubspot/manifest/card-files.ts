import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { markGenerated } from '../../../src/crm/generated-mark.js';
import { HUBSPOT_FIELDS } from '../fields/field-names.js';

/**
 * The app card's part of the HubSpot project: the card's source files from connectors/hubspot/card/ui/ copied as
 * they are, the connector's URL the card calls (`app-url.ts`, written here), the property names it reads
 * (`card-property-names.ts`, written here from the field table and into the card's own folder too), one card
 * component for the company record tab and one for its sidebar (both drawn by the same entry file), and the
 * cards' package.json, which HubSpot installs before it bundles them.
 */

/** Where the card's own files live in this repository. */
export const HUBSPOT_CARD_SOURCE_DIR = 'connectors/hubspot/card/ui';

/** The card's own files, copied into `src/app/cards/` unchanged but for the generated mark on their first line. */
export const HUBSPOT_CARD_SOURCES = [
  'card-data.ts',
  'card-paths.ts',
  'card-record.ts',
  'card-text.ts',
  'seller-words.ts',
  'ReportCard.tsx',
  'report-card-entry.tsx',
] as const;

/** The card's module generated from the field table, in its own folder and in the project alike. */
export const HUBSPOT_CARD_PROPERTY_NAMES_FILE = 'card-property-names.ts';

const CARD_FILES_SOURCE = 'connectors/hubspot/manifest/card-files.ts';

/** The card's entry point, as the components' `entrypoint` names it (relative to the project's srcDir). */
export const HUBSPOT_CARD_ENTRYPOINT = '/app/cards/report-card-entry.tsx';

/** What the cards need at build time; the same ranges as the repository's package.json (a test checks). */
export const HUBSPOT_CARD_DEPENDENCIES = {
  '@hubspot/ui-extensions': '^0.17.0',
  react: '^18.3.1',
  zod: '^4.6.7',
} as const;

export const HUBSPOT_CARD_LOCATIONS = {
  report_connector_card_tab: 'crm.record.tab',
  report_connector_card_sidebar: 'crm.record.sidebar',
} as const;

/** connectors/hubspot/card/ui/, from the source tree (tests) or from the build in dist/ (`npm run manifests`). */
function cardSourceDir(): string {
  const candidates = [
    join(import.meta.dirname, '..', 'card', 'ui'),
    join(import.meta.dirname, '..', '..', '..', '..', 'connectors', 'hubspot', 'card', 'ui'),
  ];
  const found = candidates.find((dir) => existsSync(join(dir, 'report-card-entry.tsx')));
  if (!found) throw new Error(`the card's source files were not found (looked in ${candidates.join(', ')})`);
  return found;
}

/** A TypeScript string literal in the repository's quote style. */
function quoted(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/**
 * `card-property-names.ts`: the HubSpot property of each field, from HUBSPOT_PROPERTY_NAMES in FIELDS order. The
 * card imports nothing from the repository (HubSpot builds it apart), so the names are written into its folder.
 */
export function cardPropertyNamesModule(): string {
  const lines = [
    '/**',
    ' * The HubSpot company property of each field the card reads: HUBSPOT_PROPERTY_NAMES of',
    ' * connectors/hubspot/fields/field-names.ts, written out because HubSpot builds the card apart from the',
    ' * repository. `npm run manifests -- --app-url <APP_URL>` writes this file into the card folder and into the',
    ' * HubSpot project; test/hubspot-manifest.test.ts fails when either differs from the field table.',
    ' */',
    'export const CARD_PROPERTY_NAMES = {',
    ...HUBSPOT_FIELDS.map((f) => `  ${f.key}: ${quoted(f.hubspot)},`),
    '} as const;',
    '',
  ];
  return markGenerated(HUBSPOT_CARD_PROPERTY_NAMES_FILE, lines.join('\n'), { generator: CARD_FILES_SOURCE });
}

/**
 * Writes the card's generated module into the card's folder (by default the clone's connectors/hubspot/card/ui/,
 * which the repository's tests and the component preview build from); returns the file written.
 */
export async function writeHubSpotCardSources(dir: string = cardSourceDir()): Promise<string[]> {
  const path = join(dir, HUBSPOT_CARD_PROPERTY_NAMES_FILE);
  await writeFile(path, cardPropertyNamesModule(), 'utf8');
  return [path];
}

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** Relative path (under the project root) -> content, for a connector at `appUrl` (no trailing slash). */
export function hubspotCardFiles(appUrl: string): Record<string, string> {
  const dir = cardSourceDir();
  const files: Record<string, string> = {};
  for (const [uid, location] of Object.entries(HUBSPOT_CARD_LOCATIONS)) {
    const where = location === 'crm.record.tab' ? 'tab' : 'sidebar';
    files[`src/app/cards/report-card-${where}-hsmeta.json`] = json({
      uid,
      type: 'card',
      config: {
        name: 'Report score',
        description:
          'The company’s published report: score, band, pillars, verification and alerts; the review decision or report request it waits for.',
        location,
        entrypoint: HUBSPOT_CARD_ENTRYPOINT,
        objectTypes: ['companies'],
      },
    });
  }
  for (const name of HUBSPOT_CARD_SOURCES) {
    files[`src/app/cards/${name}`] = markGenerated(name, readFileSync(join(dir, name), 'utf8'), {
      copyOf: `${HUBSPOT_CARD_SOURCE_DIR}/${name}`,
    });
  }
  files['src/app/cards/app-url.ts'] = markGenerated(
    'app-url.ts',
    `/** The connector's public URL the card calls (written by the manifest generator). */\nexport const APP_URL = ${JSON.stringify(appUrl)};\n`,
    { generator: CARD_FILES_SOURCE },
  );
  files[`src/app/cards/${HUBSPOT_CARD_PROPERTY_NAMES_FILE}`] = cardPropertyNamesModule();
  files['src/app/cards/package.json'] = json({
    name: 'report-connector-cards',
    version: '0.1.0',
    private: true,
    type: 'module',
    dependencies: HUBSPOT_CARD_DEPENDENCIES,
  });
  return files;
}
