import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * docs/architecture.md names files and functions; this keeps them true. A reference is written in backticks,
 * either a path (`src/webhooks/report-route.ts`) or a path and a name (`src/webhooks/report-route.ts#handle`):
 * the file must exist and declare that name (a function, class, const, method or property).
 */

const ROOT = join(import.meta.dirname, '..');
const doc = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');

const references = [
  ...doc.matchAll(/`((?:src|connectors|test|bench|local|manifests)\/[\w./-]+?)(?:#([\w.]+))?`/g),
].map((m) => ({ path: m[1]!, name: m[2] }));

function declares(source: string, name: string): boolean {
  const last = name.split('.').at(-1)!;
  const declaration = new RegExp(
    `(?:function\\*?|class|const|let|interface|type|enum)\\s+${last}\\b|^\\s*(?:(?:export|public|private|protected|readonly|static|async|override)\\s+)*${last}\\s*[(<:=]`,
    'm',
  );
  return declaration.test(source);
}

describe('docs/architecture.md', () => {
  it('is at most 150 lines, and the README at most 450', () => {
    expect(doc.split('\n').length).toBeLessThanOrEqual(150);
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(450);
  });

  it('tells a declared name from one that is only mentioned', () => {
    const source = 'export class A {\n  async handle(x) {}\n}\nconst b = 1;\n// calls missing()\n';
    expect(declares(source, 'A.handle')).toBe(true);
    expect(declares(source, 'b')).toBe(true);
    expect(declares(source, 'missing')).toBe(false);
  });

  it('names files and functions', () => {
    expect(references.length).toBeGreaterThan(20);
    expect(references.filter((r) => r.name).length).toBeGreaterThan(10);
  });

  it.each(references.map((r) => [r.name ? `${r.path}#${r.name}` : r.path, r] as const))(
    '%s exists',
    (_label, { path, name }) => {
      const file = join(ROOT, path);
      expect(existsSync(file), `${path} does not exist`).toBe(true);
      if (name) expect(declares(readFileSync(file, 'utf8'), name), `${path} declares no ${name}`).toBe(true);
    },
  );
});
