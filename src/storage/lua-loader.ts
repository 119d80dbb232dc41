import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { findProjectRoot } from '../util/project-root.js';

/**
 * Reads the connector's Lua scripts from `src/storage/lua/` (scripts) and `src/storage/lua/lib/` (pieces several
 * scripts share). The folder is found from the project root, not from this module's place: the module runs
 * from `src/storage/` under vitest and from `dist/src/storage/` once built, and the build copies no `.lua`
 * file, so both read the same source files.
 *
 * A line `-- @include <name>` is replaced by `lib/<name>.lua`, itself expanded the same way; a piece included
 * twice (directly and through another piece) is inserted once, where it first appears. This is the only way
 * scripts share code: no script text is assembled in TypeScript.
 */

/** The Lua folder seen from a module at `fromUrl` (this one by default), built or not. */
export function luaFolder(fromUrl: string = import.meta.url): string {
  return join(findProjectRoot(fromUrl), 'src', 'storage', 'lua');
}

export const LUA_FOLDER = luaFolder();

const INCLUDE = /^--\s*@include\s+([a-z0-9-]+)\s*$/;

export class LuaSourceNotFoundError extends Error {
  readonly code = 'LUA_SOURCE_NOT_FOUND';
  constructor(readonly path: string) {
    super(`Lua source ${path} is missing: the package's src/storage/lua folder must ship beside dist/`);
    this.name = 'LuaSourceNotFoundError';
  }
}

export class LuaIncludeCycleError extends Error {
  readonly code = 'LUA_INCLUDE_CYCLE';
  constructor(readonly chain: readonly string[]) {
    super(`Lua includes form a cycle: ${chain.join(' -> ')}`);
    this.name = 'LuaIncludeCycleError';
  }
}

function readSource(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if (err instanceof Error && 'code' in err && err.code === 'ENOENT')
      throw new LuaSourceNotFoundError(path);
    throw err;
  }
}

/** A script's source as written (`<name>.lua`), its includes not yet expanded. */
export function readScriptSource(name: string, folder: string = LUA_FOLDER): string {
  return readSource(join(folder, `${name}.lua`));
}

/** A shared piece's source as written (`lib/<name>.lua`). */
export function readLibrarySource(name: string, folder: string = LUA_FOLDER): string {
  return readSource(join(folder, 'lib', `${name}.lua`));
}

/** Lua text with every `-- @include` line replaced by the piece it names (see above). */
export function expandIncludes(source: string, folder: string = LUA_FOLDER): string {
  const included = new Set<string>();
  const expand = (text: string, chain: readonly string[]): string =>
    text
      .split('\n')
      .map((line) => {
        const name = INCLUDE.exec(line)?.[1];
        if (name === undefined) return line;
        if (chain.includes(name)) throw new LuaIncludeCycleError([...chain, name]);
        if (included.has(name)) return `-- (${name} included above)`;
        included.add(name);
        return expand(readLibrarySource(name, folder), [...chain, name]);
      })
      .join('\n');
  return expand(source, []);
}

/** A script ready to send: `<name>.lua` with its includes expanded. */
export function loadScriptSource(name: string, folder: string = LUA_FOLDER): string {
  return expandIncludes(readScriptSource(name, folder), folder);
}

/**
 * A number a shared piece declares as `local NAME = <number>`: the piece is where the value is decided, and
 * TypeScript that needs it (tests, sizing) reads it from there rather than keeping a copy that must agree.
 */
export function libraryConstant(library: string, name: string, folder: string = LUA_FOLDER): number {
  const source = readLibrarySource(library, folder);
  const match = new RegExp(`^local ${name} = (\\d+(?:\\.\\d+)?)\\s*$`, 'm').exec(source);
  if (!match?.[1]) throw new LuaConstantNotFoundError(library, name);
  return Number(match[1]);
}

export class LuaConstantNotFoundError extends Error {
  readonly code = 'LUA_CONSTANT_NOT_FOUND';
  constructor(
    readonly library: string,
    readonly constant: string,
  ) {
    super(`lib/${library}.lua declares no number ${constant}`);
    this.name = 'LuaConstantNotFoundError';
  }
}
