import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * docs/architecture.md names files and functions; this keeps them true. A reference is written in backticks,
 * either a path (`src/webhooks/report-route.ts`) or a path and a name (`src/webhooks/report-route.ts#handle`):
 * the file must exist and declare that name (a function, class, const, method or property).
 *
 * The walk of one `score.changed` is followed in the source: each numbered step starts with its function, which
 * must call the next step's (by the called name: a narrow dependency is named after the function bound to it),
 * or, where the step says "queue hop, the `<job>` job", hold that job's name as the next step's function does
 * (the producer adds it, the workers dispatch it). A function named after "calls" must be called by the step's.
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

/** A declaration's node: `name` (a function or a const) or `Class.member` (a method or property). */
function declarationOf(path: string, name: string): ts.Node | undefined {
  const file = ts.createSourceFile(
    path,
    readFileSync(join(ROOT, path), 'utf8'),
    ts.ScriptTarget.Latest,
    true,
  );
  const [first, member] = name.split('.');
  let found: ts.Node | undefined;
  const visit = (node: ts.Node): void => {
    if (found) return;
    if (member === undefined) {
      if (
        (ts.isFunctionDeclaration(node) || ts.isVariableDeclaration(node)) &&
        node.name?.getText() === first
      )
        found = node;
    } else if (ts.isClassDeclaration(node) && node.name?.text === first) {
      found = node.members.find((m) => m.name?.getText() === member);
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** The names a declaration calls (`f()`, `a.b.f()`, `new F()`: `f`, `F`) and the strings it holds. */
function bodyOf(node: ts.Node): { calls: Set<string>; strings: Set<string> } {
  const calls = new Set<string>();
  const strings = new Set<string>();
  const visit = (n: ts.Node): void => {
    if (ts.isCallExpression(n) || ts.isNewExpression(n)) {
      const callee = n.expression;
      if (ts.isIdentifier(callee)) calls.add(callee.text);
      else if (ts.isPropertyAccessExpression(callee)) calls.add(callee.name.text);
    }
    if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) strings.add(n.text);
    ts.forEachChild(n, visit);
  };
  visit(node);
  return { calls, strings };
}

interface Step {
  n: number;
  path: string;
  name: string;
  /** The job this step queues for the next one (a queue hop). */
  hop?: string;
  /** Functions the step says its function calls. */
  calls: { path: string; name: string }[];
}

const REF = String.raw`\`((?:src|connectors)\/[\w./-]+?)#([\w.]+)\``;

function walkSteps(markdown: string): Step[] {
  const section = markdown.split(/^## /m).find((part) => part.startsWith('The path of one `score.changed`'));
  if (!section) return [];
  const texts = section.split(/^(?=\d+\. )/m).filter((part) => /^\d+\. /.test(part));
  return texts.map((text) => {
    const head = new RegExp(`^(\\d+)\\. ${REF}`).exec(text);
    if (!head) throw new Error(`step does not start with its function: ${text.slice(0, 80)}`);
    const hop = /queue hop, the `([\w-]+)` job/.exec(text)?.[1];
    const calls = [...text.matchAll(new RegExp(`calls ${REF}`, 'g'))].map((m) => ({
      path: m[1]!,
      name: m[2]!,
    }));
    return { n: Number(head[1]), path: head[2]!, name: head[3]!, ...(hop ? { hop } : {}), calls };
  });
}

function lastName(name: string): string {
  return name.split('.').at(-1)!;
}

describe("docs/architecture.md's walk of one score.changed", () => {
  const steps = walkSteps(doc);

  it('is numbered in order, from the route to the CRM write, with two queue hops', () => {
    expect(steps.length).toBeGreaterThan(10);
    expect(steps.map((s) => s.n)).toEqual(steps.map((_, i) => i + 1));
    expect(steps[0]).toMatchObject({ path: 'src/server/webhook-fast-path.ts' });
    expect(lastName(steps.at(-1)!.name)).toBe('writeCompanies');
    expect(steps.filter((s) => s.hop).map((s) => s.hop)).toEqual(['score-changes', 'slug-update']);
  });

  it('tells a call from a mention', () => {
    const node = ts.createSourceFile(
      'x.ts',
      'function a() { deps.b(); new C(); const s = "job"; /* d() */ }',
      ts.ScriptTarget.Latest,
      true,
    );
    const body = bodyOf(node);
    expect([...body.calls].sort()).toEqual(['C', 'b']);
    expect(body.strings.has('job')).toBe(true);
  });

  it.each(steps.map((step, i) => [`${step.n}. ${step.path}#${step.name}`, step, steps[i + 1]] as const))(
    '%s calls what the doc says it calls',
    (_label, step, next) => {
      const node = declarationOf(step.path, step.name);
      expect(node, `${step.path} declares no ${step.name}`).toBeDefined();
      const body = bodyOf(node!);
      for (const callee of step.calls) {
        expect(
          declarationOf(callee.path, callee.name),
          `${callee.path} declares no ${callee.name}`,
        ).toBeDefined();
        expect(body.calls, `${step.name} does not call ${callee.name}`).toContain(lastName(callee.name));
      }
      if (!next) return;
      if (step.hop) {
        expect(body.strings, `${step.name} does not queue ${step.hop}`).toContain(step.hop);
        const dispatcher = bodyOf(declarationOf(next.path, next.name)!);
        expect(dispatcher.strings, `${next.name} does not run ${step.hop}`).toContain(step.hop);
      } else {
        expect(body.calls, `${step.name} does not call ${next.name} (step ${next.n})`).toContain(
          lastName(next.name),
        );
      }
    },
  );
});
