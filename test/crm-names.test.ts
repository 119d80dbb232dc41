import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * One folder per CRM: outside the provider registry (src/providers.ts), nothing under src/ names a CRM, in
 * code, strings or comments. What is CRM-specific comes from the provider (connectors/<crm>/), so a new CRM
 * is a folder and one line in the registry.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const REGISTRY = 'src/providers.ts';
const CRM_NAME = /hubspot|salesforce/i;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|js|mjs|cjs|lua|json|html|css)$/.test(entry.name) ? [path] : [];
  });
}

/** `file:line: text` for every line under `dir` that names a CRM, the registry aside. */
function crmNamesOutsideRegistry(root: string, dir = 'src'): string[] {
  return sourceFiles(join(root, dir)).flatMap((path) => {
    const file = relative(root, path).split('\\').join('/');
    if (file === REGISTRY) return [];
    return readFileSync(path, 'utf8')
      .split('\n')
      .flatMap((line, i) => (CRM_NAME.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : []));
  });
}

describe('CRM names in src/', () => {
  it('appear only in the provider registry', () => {
    expect(crmNamesOutsideRegistry(ROOT)).toEqual([]);
  });

  it('are found in code, strings and comments alike, and in the registry only there', () => {
    const root = mkdtempSync(join(tmpdir(), 'crm-names-'));
    try {
      mkdirSync(join(root, 'src', 'crm'), { recursive: true });
      writeFileSync(join(root, REGISTRY), "export const kinds = ['hubspot', 'salesforce'];\n");
      writeFileSync(
        join(root, 'src', 'crm', 'code.ts'),
        "const neutral = 1;\nexport const kind = 'hubspot';\n// a Salesforce Account\nexport class HubSpotThing {}\n",
      );
      expect(crmNamesOutsideRegistry(root)).toEqual([
        "src/crm/code.ts:2: export const kind = 'hubspot';",
        'src/crm/code.ts:3: // a Salesforce Account',
        'src/crm/code.ts:4: export class HubSpotThing {}',
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
