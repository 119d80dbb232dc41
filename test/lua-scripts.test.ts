import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  expandIncludes,
  LUA_FOLDER,
  LuaIncludeCycleError,
  LuaSourceNotFoundError,
  loadScriptSource,
  luaFolder,
  readScriptSource,
} from '../src/storage/lua-loader.js';
import { findProjectRoot } from '../src/util/project-root.js';

/**
 * Every Lua script states its contract in a header: the KEYS it touches (`-- KEYS[n] ...`, or `-- KEYS[1..n]`
 * for any number), its ARGV (`-- ARGV[n] ...`, `-- ARGV[n..] ...` for a variadic tail, or `-- ARGV none`) and
 * what it returns (`-- returns ...`). The header is the comment block the file starts with.
 */

const scripts = readdirSync(LUA_FOLDER)
  .filter((f) => f.endsWith('.lua'))
  .map((f) => f.slice(0, -'.lua'.length))
  .sort();
const libraries = readdirSync(join(LUA_FOLDER, 'lib'))
  .filter((f) => f.endsWith('.lua'))
  .map((f) => f.slice(0, -'.lua'.length));

interface Header {
  lines: string[];
  keys: Set<number>;
  keysVariadic: boolean;
  argv: Set<number>;
  argvTailFrom: number | null;
  argvNone: boolean;
  returns: boolean;
}

function header(source: string): { header: Header; body: string } {
  const lines = source.split('\n');
  let end = 0;
  while (end < lines.length && (lines[end]!.startsWith('--') || lines[end]!.trim() === '')) {
    if (/^--\s*@include/.test(lines[end]!)) break;
    end += 1;
  }
  const head = lines.slice(0, end);
  const h: Header = {
    lines: head,
    keys: new Set(),
    keysVariadic: false,
    argv: new Set(),
    argvTailFrom: null,
    argvNone: false,
    returns: false,
  };
  for (const line of head) {
    const key = /^-- KEYS\[(\d+)(\.\.n)?\]/.exec(line);
    if (key) {
      if (key[2]) h.keysVariadic = true;
      else h.keys.add(Number(key[1]));
    }
    const arg = /^-- ARGV\[(\d+)(\.\.)?\]/.exec(line);
    if (arg) {
      if (arg[2]) h.argvTailFrom = Number(arg[1]);
      else h.argv.add(Number(arg[1]));
    }
    if (/^-- ARGV none\b/.test(line)) h.argvNone = true;
    if (/^-- returns \S/.test(line)) h.returns = true;
  }
  return { header: h, body: lines.slice(end).join('\n') };
}

/** The indices a body uses as `NAME[n]` with a literal n. */
function indices(body: string, name: 'KEYS' | 'ARGV'): Set<number> {
  return new Set([...body.matchAll(new RegExp(`\\b${name}\\[(\\d+)\\]`, 'g'))].map((m) => Number(m[1])));
}

/** Whether a body uses the table as a whole (`ipairs(KEYS)`, `#ARGV`, `unpack(ARGV)`, `ARGV[i]`). */
function usesWhole(body: string, name: 'KEYS' | 'ARGV'): boolean {
  return new RegExp(`(ipairs\\(${name}\\)|#${name}\\b|unpack\\(${name}\\)|\\b${name}\\[[a-z])`).test(body);
}

/** Lua text without its comments, so that a header's wording never counts as use. */
function code(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(/--.*$/, ''))
    .join('\n');
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

describe('Lua scripts', () => {
  it('are there, with their shared pieces', () => {
    expect(scripts.length).toBeGreaterThan(25);
    expect(libraries).toEqual(expect.arrayContaining(['linear-hash', 'record-state', 'review-items']));
  });

  it.each(scripts)('%s.lua has a header naming KEYS, ARGV and what it returns', (name) => {
    const { header: h } = header(readScriptSource(name));
    expect(h.lines[0], 'the first line says what the script does').toMatch(/^-- \S/);
    expect(h.keys.size > 0 || h.keysVariadic, 'KEYS').toBe(true);
    expect(h.argv.size > 0 || h.argvTailFrom !== null || h.argvNone, 'ARGV').toBe(true);
    expect(h.returns, 'returns').toBe(true);
  });

  it.each(scripts)('%s.lua uses exactly the KEYS and ARGV its header declares', (name) => {
    const { header: h, body } = header(readScriptSource(name));
    const used = code(expandIncludes(body));
    const keys = indices(used, 'KEYS');
    const declaredKeys = [...h.keys].sort((a, b) => a - b);
    // Declared keys are numbered 1..n without gaps, and the body uses each of them and no other.
    expect(declaredKeys).toEqual(declaredKeys.map((_, i) => i + 1));
    expect([...keys].sort((a, b) => a - b)).toEqual(declaredKeys);
    expect(usesWhole(used, 'KEYS')).toBe(h.keysVariadic);

    const args = [...indices(used, 'ARGV')];
    if (h.argvNone) {
      expect(args).toEqual([]);
      expect(usesWhole(used, 'ARGV')).toBe(false);
    }
    for (const n of args) {
      expect(h.argv.has(n) || (h.argvTailFrom !== null && n >= h.argvTailFrom), `ARGV[${n}] declared`).toBe(
        true,
      );
    }
    for (const n of h.argv) expect(args, `ARGV[${n}] used`).toContain(n);
    if (usesWhole(used, 'ARGV')) expect(h.argvTailFrom, 'a variadic ARGV declared').not.toBeNull();
  });

  it('shared pieces say what they hold and touch no KEYS or ARGV of their own', () => {
    for (const name of libraries) {
      const source = readFileSync(join(LUA_FOLDER, 'lib', `${name}.lua`), 'utf8');
      expect(source.split('\n')[0], name).toMatch(/^-- \S/);
      expect(code(source), name).not.toMatch(/\b(KEYS|ARGV)\b/);
    }
  });

  it('every script is loaded by the code and every script the code loads exists', () => {
    const root = findProjectRoot();
    const loaded = new Set(
      sourceFiles(join(root, 'src')).flatMap((file) =>
        [...readFileSync(file, 'utf8').matchAll(/LuaScript\.load\('([a-z0-9-]+)'\)/g)].map((m) => m[1]!),
      ),
    );
    expect([...loaded].sort()).toEqual(scripts);
    for (const name of scripts) expect(() => loadScriptSource(name)).not.toThrow();
  });

  it('the event log has one writer: lib/event-log.lua, which every script that logs an event includes', () => {
    const logging = scripts.filter((name) => /^-- KEYS\[\d+\] the event log\b/m.test(readScriptSource(name)));
    expect(logging.sort()).toEqual(['event-record', 'inbox-accept-many']);
    for (const name of logging) {
      expect(readScriptSource(name), name).toMatch(/^-- @include event-log$/m);
      expect(code(readScriptSource(name)), name).not.toMatch(/'LPUSH'/);
    }
    // In TypeScript, nothing pushes onto the log: its keys are written by the scripts alone.
    const root = findProjectRoot();
    const pushing = sourceFiles(join(root, 'src')).filter((file) =>
      /\.lpush\(\s*(?:this\.)?keys\.events\(\)/.test(readFileSync(file, 'utf8')),
    );
    expect(pushing).toEqual([]);
  });

  it('no TypeScript in src or connectors holds Lua', () => {
    const root = findProjectRoot();
    const files = [...sourceFiles(join(root, 'src')), ...sourceFiles(join(root, 'connectors'))];
    const holding = files.filter((file) => readFileSync(file, 'utf8').includes('redis.call'));
    expect(holding).toEqual([]);
  });
});

describe('the Lua loader', () => {
  it('finds the same folder from the sources and from a build, which copies no .lua file', () => {
    const root = findProjectRoot();
    const built = pathToFileURL(join(root, 'dist', 'src', 'storage', 'lua-loader.js')).href;
    const compiledForTests = pathToFileURL(
      join(root, 'test-artifacts', 'worker-build', 'src', 'storage', 'lua-loader.js'),
    ).href;
    expect(LUA_FOLDER).toBe(join(root, 'src', 'storage', 'lua'));
    expect(luaFolder(built)).toBe(LUA_FOLDER);
    expect(luaFolder(compiledForTests)).toBe(LUA_FOLDER);
  });

  const folder = mkdtempSync(join(tmpdir(), 'rc-lua-'));
  mkdirSync(join(folder, 'lib'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('inserts each shared piece once, where it is first included, pieces included by pieces too', () => {
    writeFileSync(join(folder, 'lib', 'a.lua'), '-- a\nlocal A = 1');
    writeFileSync(join(folder, 'lib', 'b.lua'), '-- b\n-- @include a\nlocal B = A + 1');
    writeFileSync(join(folder, 'both.lua'), '-- @include b\n-- @include a\nreturn B');
    const source = loadScriptSource('both', folder);
    expect(source.match(/local A = 1/g)).toHaveLength(1);
    expect(source.indexOf('local A = 1')).toBeLessThan(source.indexOf('local B = A + 1'));
    expect(source).not.toMatch(/@include/);
  });

  it('refuses a cycle and names a missing piece', () => {
    writeFileSync(join(folder, 'lib', 'x.lua'), '-- x\n-- @include y');
    writeFileSync(join(folder, 'lib', 'y.lua'), '-- y\n-- @include x');
    writeFileSync(join(folder, 'cycle.lua'), '-- @include x\nreturn 1');
    writeFileSync(join(folder, 'missing.lua'), '-- @include nowhere\nreturn 1');
    expect(() => loadScriptSource('cycle', folder)).toThrow(LuaIncludeCycleError);
    expect(() => loadScriptSource('missing', folder)).toThrow(LuaSourceNotFoundError);
  });
});
