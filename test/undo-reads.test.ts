import { describe, expect, it } from 'vitest';
import { Keys } from '../src/storage/keys.js';
import { RunLinks } from '../src/storage/run-links.js';
import { type SeenRecord, UNDO_READ_SECONDS, UndoReads } from '../src/storage/undo-reads.js';
import { redisUnderOwnPrefix } from './support/redis-prefixes.js';

/** The pieces an undo's preview is paged and kept with, on the real Redis under a prefix of their own. */

const { prefix, redis } = redisUnderOwnPrefix();
const keys = new Keys(prefix);

async function collect(pages: AsyncGenerator<Map<string, string>>): Promise<Map<string, string>[]> {
  const out: Map<string, string>[] = [];
  for await (const page of pages) out.push(page);
  return out;
}

describe('RunLinks.pagesOfRuns', () => {
  it('gives each record once, in pages of at most the size asked, with the newest run’s link', async () => {
    const newest = Object.fromEntries(Array.from({ length: 250 }, (_, i) => [`r${i}`, `new-${i}`]));
    // The run it superseded linked 100 of the same records and 80 others.
    const older = Object.fromEntries([
      ...Array.from({ length: 100 }, (_, i) => [`r${i * 2}`, `old-${i}`]),
      ...Array.from({ length: 80 }, (_, i) => [`o${i}`, `old-o${i}`]),
    ]);
    await redis.hset(keys.runLinks('inst-a', 'run-2'), newest);
    await redis.hset(keys.runLinks('inst-a', 'run-1'), older);
    const pages = await collect(new RunLinks(redis, keys).pagesOfRuns('inst-a', ['run-2', 'run-1'], 100));
    expect(pages.map((p) => p.size)).toEqual([100, 100, 100, 30]);
    const all = new Map(pages.flatMap((p) => [...p]));
    expect(all.size).toBe(330);
    expect(all.get('r0')).toBe('new-0');
    expect(all.get('r2')).toBe('new-2');
    expect(all.get('o79')).toBe('old-o79');
    expect(await collect(new RunLinks(redis, keys).pagesOfRuns('inst-a', ['none'], 100))).toEqual([]);
  });
});

describe('UndoReads', () => {
  it('keeps a preview’s read under its digest for minutes, records gone included, until dropped', async () => {
    const reads = new UndoReads(redis, keys);
    const seen = new Map<string, SeenRecord>([
      ['r1', { slug: 'acme', source: 'auto', name: 'Acme' }],
      ['r2', { slug: null, source: 'person', name: null }],
      ['r3', null],
    ]);
    expect(await reads.has('inst-a', 'digest-1')).toBe(false);
    await reads.save('inst-a', 'digest-1', seen);
    expect(await reads.has('inst-a', 'digest-1')).toBe(true);
    const ttl = await redis.ttl(keys.undoRead('inst-a', 'digest-1'));
    expect(ttl).toBeGreaterThan(UNDO_READ_SECONDS - 10);
    expect(ttl).toBeLessThanOrEqual(UNDO_READ_SECONDS);
    expect(await reads.get('inst-a', 'digest-1', ['r1', 'r2', 'r3', 'r4'])).toEqual(seen);
    // Another digest, another installation: nothing.
    expect((await reads.get('inst-a', 'digest-2', ['r1'])).size).toBe(0);
    expect((await reads.get('inst-b', 'digest-1', ['r1'])).size).toBe(0);
    // A value of another shape is not taken for a read (nor for a record gone): read again.
    await redis.hset(keys.undoRead('inst-a', 'digest-1'), 'r5', '{"slug":3}', 'r6', 'not json');
    expect([...(await reads.get('inst-a', 'digest-1', ['r5', 'r6', 'r3'])).keys()]).toEqual(['r3']);
    await reads.drop('inst-a', 'digest-1');
    expect(await reads.has('inst-a', 'digest-1')).toBe(false);
  });
});
