import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * Stores are built once, in the composition root, and handed out (src/app/stores.ts): a consumer takes the
 * store it uses rather than Redis and the keys to build its own. A store here is a class of `src/` or
 * `connectors/` whose constructor takes the Redis client. Tests, benchmarks and the local stand-ins are roots of
 * their own and may build what they test.
 */

const ROOT = join(import.meta.dirname, '..');

/** Where stores are built: the application's root, and each provider's index.ts through `storage.store`. */
const COMPOSITION_ROOTS = ['src/app/stores.ts', 'src/app/context.ts'];
const PROVIDER_ROOT = /^connectors\/[^/]+\/index\.ts$/;

/**
 * Classes that take the Redis client and are made where they are used, on purpose: a rate gate is made per key
 * and lane with that use's options (its state is in Redis under the key it is given); the lock holder is one
 * per connection, through `lockHolderFor`.
 */
const MADE_WHERE_USED: Record<string, string> = {
  RedisRateGate: 'src/app/runtime.ts',
  LockHolder: 'src/storage/lock-holder.ts',
};

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return entry === 'local' ? [] : sourcesUnder(path);
    return /\.tsx?$/.test(entry) && !entry.endsWith('.d.ts') ? [path] : [];
  });
}

const sources = [...sourcesUnder(join(ROOT, 'src')), ...sourcesUnder(join(ROOT, 'connectors'))].map(
  (path) => ({
    file: relative(ROOT, path),
    source: ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true),
  }),
);

function walk(node: ts.Node, visit: (node: ts.Node) => void): void {
  visit(node);
  ts.forEachChild(node, (child) => walk(child, visit));
}

/** The classes whose constructor has a parameter of type RedisClient. */
function storeClasses(): Set<string> {
  const out = new Set<string>();
  for (const { source } of sources) {
    walk(source, (node) => {
      if (!ts.isClassDeclaration(node) || !node.name) return;
      const ctor = node.members.find(ts.isConstructorDeclaration);
      if (ctor?.parameters.some((p) => p.type?.getText() === 'RedisClient')) out.add(node.name.text);
    });
  }
  return out;
}

/** Whether `node` sits in the `make` function of a `storage.store(name, make)` call. */
function insideStoreCall(node: ts.Node): boolean {
  for (let at: ts.Node | undefined = node.parent; at; at = at.parent) {
    if (ts.isCallExpression(at) && ts.isPropertyAccessExpression(at.expression)) {
      if (at.expression.name.text === 'store') return true;
    }
  }
  return false;
}

describe('store construction', () => {
  const classes = storeClasses();

  it('finds the stores it guards', () => {
    for (const name of ['LinkIndex', 'SyncRuns', 'EventLatencies', 'RunLinks', 'SalesforceConnectionStore']) {
      expect(classes.has(name), name).toBe(true);
    }
  });

  it('builds stores only in the composition root', () => {
    const outside: string[] = [];
    for (const { file, source } of sources) {
      if (COMPOSITION_ROOTS.includes(file)) continue;
      walk(source, (node) => {
        if (!ts.isNewExpression(node) || !ts.isIdentifier(node.expression)) return;
        const name = node.expression.text;
        if (!classes.has(name) || MADE_WHERE_USED[name] === file) return;
        if (PROVIDER_ROOT.test(file) && insideStoreCall(node)) return;
        const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
        outside.push(`${file}:${line} new ${name}(`);
      });
    }
    expect(outside, 'take the store from src/app/stores.ts (or storage.store in a provider) instead').toEqual(
      [],
    );
  });
});

/**
 * Module state that grows or changes: a top-level `let`, or a top-level empty `new Map()`/`new Set()` (one
 * built from a list is a lookup table). What the process keeps belongs to the composition root or an object it hands out;
 * these are the exceptions, each a memo of a pure function or a process-wide resource, with why.
 */
const MODULE_STATE_ALLOWED: Record<string, string> = {
  // Counting units of recent addresses: cleared at 4,096 entries.
  'src/util/counting-unit.ts#units': 'memo',
  // One HMAC key per configured webhook secret: as many as the configuration holds.
  'src/webhooks/report-signature.ts#standardMacs': 'memo',
  // Connection pools per proxy, and jsforce's router installed once: nothing of any client.
  'connectors/salesforce/api/response-observer.ts#agents': 'pool',
  'connectors/salesforce/api/response-observer.ts#installed': 'once',
  // One gRPC channel per Pub/Sub endpoint, shared by every stream of the process (HTTP/2 multiplexes them).
  'connectors/salesforce/changes/cdc-stream.ts#clients': 'pool',
  // The Pub/Sub API's service definition, parsed from its .proto once.
  'connectors/salesforce/changes/pubsub/proto.ts#loaded': 'memo',
};

describe('module state', () => {
  it('keeps no growing module state outside the listed memos and pools', () => {
    const found: string[] = [];
    for (const { file, source } of sources) {
      for (const statement of source.statements) {
        if (!ts.isVariableStatement(statement)) continue;
        const isLet = (statement.declarationList.flags & ts.NodeFlags.Let) !== 0;
        for (const declaration of statement.declarationList.declarations) {
          const init = declaration.initializer;
          const growing =
            init !== undefined &&
            ts.isNewExpression(init) &&
            ts.isIdentifier(init.expression) &&
            ['Map', 'Set'].includes(init.expression.text) &&
            !init.arguments?.length;
          if (!isLet && !growing) continue;
          const name = `${file}#${declaration.name.getText()}`;
          if (!(name in MODULE_STATE_ALLOWED)) found.push(name);
        }
      }
    }
    expect(found, 'keep it in an object the composition root builds and hands out').toEqual([]);
  });
});
