import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A module runs from `src/` under vitest and from `dist/src/` once built, so a fixed number
 * of `..` would be wrong in one of them: walk up to the folder that holds `package.json` instead.
 */
export function findProjectRoot(fromUrl: string = import.meta.url): string {
  let dir = dirname(fileURLToPath(fromUrl));
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new ProjectRootNotFoundError(fromUrl);
    dir = parent;
  }
}

export function defaultFixturesPath(): string {
  return join(findProjectRoot(), 'fixtures', 'reports.json');
}

export class ProjectRootNotFoundError extends Error {
  readonly code = 'PROJECT_ROOT_NOT_FOUND';
  constructor(readonly from: string) {
    super(`no folder holding package.json above ${from}`);
    this.name = 'ProjectRootNotFoundError';
  }
}
