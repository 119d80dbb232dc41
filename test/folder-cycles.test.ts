import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * No import cycle between the folders of src/ (docs/layers.md, "Folders"). The folder graph is read as the
 * house measure reads it: a folder is the first path segment under src/ (files at the root of src/ belong to
 * none), and every relative `import … from` or `export … from` in a .ts/.tsx file, types included, is an edge.
 * Unlike a check of pairs, any loop counts, however many folders it passes through.
 */

const ROOT = join(import.meta.dirname, '..');
const SRC = join(ROOT, 'src');

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) sourceFiles(path, out);
    else if (/\.tsx?$/.test(entry) && !entry.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

function folderOf(file: string): string | null {
  const path = relative(SRC, file);
  return path.startsWith('..') || !path.includes('/') ? null : path.split('/')[0]!;
}

interface Edge {
  from: string;
  to: string;
  /** `src/a/x.ts imports ../b/y.js`: where the edge comes from. */
  via: string[];
}

function folderGraph(): Map<string, Map<string, Edge>> {
  const graph = new Map<string, Map<string, Edge>>();
  for (const file of sourceFiles(SRC)) {
    const from = folderOf(file);
    if (!from) continue;
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:import|export)[^'"]*?from\s*['"](\.[^'"]+)['"]/g)) {
      const to = folderOf(resolve(dirname(file), m[1]!));
      if (!to || to === from) continue;
      const out = graph.get(from) ?? new Map<string, Edge>();
      graph.set(from, out);
      const edge = out.get(to) ?? { from, to, via: [] };
      out.set(to, edge);
      edge.via.push(`${relative(ROOT, file)} imports ${m[1]}`);
    }
  }
  return graph;
}

/** The strongly connected components of more than one folder: each is at least one cycle. */
function folderCycles(edges: ReadonlyMap<string, Iterable<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) found.push(component.sort());
  };
  for (const node of edges.keys()) if (!index.has(node)) visit(node);
  return found;
}

describe('folders of src/', () => {
  it('finds a cycle of two folders and a longer one, and none in a layered graph', () => {
    const graph = (pairs: string[]) => {
      const edges = new Map<string, string[]>();
      for (const pair of pairs) {
        const [from, to] = pair.split('>') as [string, string];
        edges.set(from, [...(edges.get(from) ?? []), to]);
      }
      return edges;
    };
    expect(folderCycles(graph(['a>b', 'b>a', 'c>a']))).toEqual([['a', 'b']]);
    expect(
      folderCycles(graph(['storage>matching', 'matching>reports', 'reports>crm', 'crm>storage'])),
    ).toEqual([['crm', 'matching', 'reports', 'storage']]);
    expect(folderCycles(graph(['app>crm', 'crm>storage', 'app>storage']))).toEqual([]);
  });

  it('import each other in no loop', () => {
    const graph = folderGraph();
    expect(graph.size).toBeGreaterThan(10);
    const edges = new Map([...graph].map(([from, out]) => [from, [...out.keys()]]));
    const cycles = folderCycles(edges).map((component) => ({
      folders: component,
      imports: component.flatMap((from) =>
        [...(graph.get(from)?.values() ?? [])].filter((e) => component.includes(e.to)).flatMap((e) => e.via),
      ),
    }));
    expect(cycles).toEqual([]);
  });
});
