import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * Zod schemas are built once, when their module loads, never per call: building one (zod 4 `init`, `_enum`,
 * `_number`) on every Lua reply, webhook or record cost 5-6% of the worker's CPU in a webhook storm (issue 30).
 * A source scan of src/ and connectors/: a `LuaScript#run` reply is a named schema, and no `z.` builder runs
 * inside a function, except in the factories below, which modules call at load time to make their constants.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SCANNED = ['src', 'connectors'];

/** `file#function`: helpers that build a schema for a module-level constant (called only at module load). */
const FACTORIES = new Set([
  'src/env-schema.ts#urlWith',
  'src/env-schema.ts#positiveNumber',
  'src/sandbox/submission-store.ts#text',
  'src/storage/slug-index.ts#recordSlugsReply',
]);

/** `z.` functions that read a result instead of building a schema. */
const NOT_BUILDERS = new Set([
  'prettifyError',
  'treeifyError',
  'flattenError',
  'formatError',
  'toJSONSchema',
]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The name of `z.a.b(...)`'s last part when the call's chain starts at the identifier `z`, else null. */
function zodFunction(call: ts.CallExpression): string | null {
  if (!ts.isPropertyAccessExpression(call.expression)) return null;
  let root: ts.Expression = call.expression;
  while (ts.isPropertyAccessExpression(root)) root = root.expression;
  return ts.isIdentifier(root) && root.text === 'z' ? call.expression.name.text : null;
}

function functionName(fn: ts.SignatureDeclaration): string {
  if (fn.name) return fn.name.getText();
  if (ts.isVariableDeclaration(fn.parent)) return fn.parent.name.getText();
  return '<anonymous>';
}

/** Names bound at module level to a Lua script (`const X = LuaScript.load(...)` or `new LuaScript(...)`). */
function luaScriptNames(source: ts.SourceFile): Set<string> {
  const names = new Set<string>();
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    for (const d of statement.declarationList.declarations) {
      const init = d.initializer?.getText(source) ?? '';
      if (ts.isIdentifier(d.name) && /^(new LuaScript\(|LuaScript\.load\()/.test(init))
        names.add(d.name.text);
    }
  }
  return names;
}

/** `file:line: text` for each schema built per call in `text` (the file's source), see the top. */
function schemasBuiltPerCall(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const scripts = luaScriptNames(source);
  const found: string[] = [];
  const at = (node: ts.Node, what: string) => {
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    found.push(`${file}:${line}: ${what}: ${node.getText(source).replace(/\s+/g, ' ').slice(0, 100)}`);
  };
  // `inSchema`: inside a builder already reported (`z.array(z.string())` is one schema built, reported once).
  const visit = (node: ts.Node, inFunction: ts.SignatureDeclaration | null, inSchema: boolean): void => {
    const fn = ts.isFunctionLike(node) && 'body' in node && node.body ? node : inFunction;
    let reported = inSchema;
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const reply = node.arguments[3];
      if (
        reply &&
        ts.isPropertyAccessExpression(callee) &&
        callee.name.text === 'run' &&
        ts.isIdentifier(callee.expression) &&
        scripts.has(callee.expression.text) &&
        !ts.isIdentifier(reply)
      ) {
        at(reply, `reply of ${callee.expression.text}.run is not a named schema`);
      }
      const built = zodFunction(node);
      const inFactory = fn !== null && FACTORIES.has(`${file}#${functionName(fn)}`);
      if (built !== null && !NOT_BUILDERS.has(built) && fn !== null && !inFactory && !inSchema) {
        at(node, `z.${built} built in ${functionName(fn)}`);
        reported = true;
      }
    }
    ts.forEachChild(node, (child) => visit(child, fn, reported));
  };
  visit(source, null, false);
  return found;
}

describe('zod schemas', () => {
  it('are built at module load in src/ and connectors/, and Lua replies are named schemas', () => {
    const found = SCANNED.flatMap((dir) =>
      sourceFiles(join(ROOT, dir)).flatMap((path) => {
        const file = relative(ROOT, path).split('\\').join('/');
        return schemasBuiltPerCall(file, readFileSync(path, 'utf8'));
      }),
    );
    expect(found).toEqual([]);
  });

  it('the scan finds an inline Lua reply and a schema built in a method', () => {
    const text = [
      "import { z } from 'zod';",
      "const DONE = LuaScript.load('inbox-done');",
      'const named = z.number();',
      'export class Inbox {',
      '  async done(redis: RedisClient): Promise<void> {',
      "    await DONE.run(redis, ['k'], [], z.enum(['done', 'newer']));",
      "    await DONE.run(redis, ['k'], [], named.nullable());",
      "    await DONE.run(redis, ['k'], [], named);",
      "    return z.coerce.number().parse('1');",
      '  }',
      '}',
      'export const factory = () => z.string();',
    ].join('\n');
    const found = schemasBuiltPerCall('src/storage/example.ts', text);
    expect(found).toEqual([
      expect.stringMatching(/^src\/storage\/example\.ts:6: reply of DONE\.run is not a named schema/),
      expect.stringMatching(/^src\/storage\/example\.ts:6: z\.enum built in done/),
      expect.stringMatching(/^src\/storage\/example\.ts:7: reply of DONE\.run is not a named schema/),
      expect.stringMatching(/^src\/storage\/example\.ts:9: z\.number built in done/),
      expect.stringMatching(/^src\/storage\/example\.ts:12: z\.string built in factory/),
    ]);
  });

  it('lets a listed factory build its schema, and only there', () => {
    const text =
      'export function urlWith() {\n  return z.string().trim();\n}\nfunction other() {\n  return z.string();\n}\n';
    expect(schemasBuiltPerCall('src/env-schema.ts', text)).toEqual([
      expect.stringMatching(/^src\/env-schema\.ts:5: z\.string built in other/),
    ]);
  });
});
