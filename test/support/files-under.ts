import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';

/** Every file below `dir`, as sorted paths relative to it with forward slashes on every platform. */
export async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)).split('\\').join('/'))
    .sort();
}
