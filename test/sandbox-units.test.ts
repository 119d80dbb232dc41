import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isLoopbackAddress } from '../src/sandbox/control-routes.js';
import { deepMerge } from '../src/sandbox/deep-merge.js';
import { FaultInjector } from '../src/sandbox/faults.js';
import { FixtureFileError, loadFixtureReports, parseFixtureReports } from '../src/sandbox/fixtures.js';
import { SandboxHttpError } from '../src/sandbox/http-error.js';
import { createSandbox } from '../src/sandbox/index.js';
import { FixedWindowRateLimiter } from '../src/sandbox/rate-limiter.js';
import { ReportStore } from '../src/sandbox/report-store.js';
import { checkQuery } from '../src/sandbox/search.js';
import { foldedWords } from '../src/sandbox/text-folding.js';
import { findProjectRoot, ProjectRootNotFoundError } from '../src/util/project-root.js';

function statusOf(fn: () => unknown): number | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof SandboxHttpError) return err.status;
    throw err;
  }
  return undefined;
}

describe('FixedWindowRateLimiter', () => {
  it('allows the limit per window, then 429 with the seconds left, then a new window', () => {
    let now = 1_000_000;
    const limiter = new FixedWindowRateLimiter(60_000, () => now);
    limiter.take('k', 2);
    limiter.take('k', 2);
    now += 15_500;
    let error: unknown;
    try {
      limiter.take('k', 2);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(SandboxHttpError);
    expect((error as SandboxHttpError).status).toBe(429);
    expect((error as SandboxHttpError).headers['retry-after']).toBe('45');
    // Other keys have their own window.
    limiter.take('other', 2);
    now += 44_500;
    expect(() => limiter.take('k', 2)).not.toThrow();
  });
});

describe('FaultInjector', () => {
  it('fails exactly the requested share, spread evenly', () => {
    const faults = new FaultInjector();
    faults.set({ failShare: 0.25 });
    const outcomes = Array.from({ length: 8 }, () => faults.shouldFail());
    expect(outcomes).toEqual([false, false, false, true, false, false, false, true]);
    faults.set({ failShare: 1 });
    expect([faults.shouldFail(), faults.shouldFail()]).toEqual([true, true]);
    faults.clear();
    expect(faults.shouldFail()).toBe(false);
  });
});

describe('deepMerge', () => {
  it('merges objects, replaces arrays and nulls, and leaves its inputs alone', () => {
    const target = { a: { b: 1, c: [1, 2] }, d: { e: 1 }, f: 'x' };
    const patch = { a: { c: [3] }, d: null, g: true };
    expect(deepMerge(target, patch)).toEqual({ a: { b: 1, c: [3] }, d: null, f: 'x', g: true });
    expect(target).toEqual({ a: { b: 1, c: [1, 2] }, d: { e: 1 }, f: 'x' });
  });
});

describe('q rule and folding', () => {
  it('accepts letters of any script, digits, spaces and hyphens up to 120 characters', () => {
    for (const q of ['Müller', 'e-commerce 24', 'Северен', 'さくら', 'नमस्ते', 'x'.repeat(120)]) {
      expect(
        statusOf(() => checkQuery(q)),
        q,
      ).toBeUndefined();
    }
    // A decomposed accent counts as one character.
    expect(statusOf(() => checkQuery(`${'e\u0301'.repeat(120)}`))).toBeUndefined();
    for (const q of ['a_b', 'a.b', 'a+b', '\u0301a', 'x'.repeat(121), 'a\nb']) {
      expect(
        statusOf(() => checkQuery(q)),
        JSON.stringify(q),
      ).toBe(400);
    }
  });

  it('folds accents, case and letters without decomposition', () => {
    expect(foldedWords('Müller Präzisionstechnik GmbH')).toEqual(['muller', 'prazisionstechnik', 'gmbh']);
    expect(foldedWords('Straße, Łódź & Ørsund')).toEqual(['strasse', 'lodz', 'orsund']);
  });
});

describe('isLoopbackAddress', () => {
  it('accepts IPv4 and IPv6 loopback and nothing else', () => {
    for (const a of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1'])
      expect(isLoopbackAddress(a), a).toBe(true);
    for (const a of ['192.0.2.2', '::ffff:10.0.0.1', 'fd00::2', '', undefined])
      expect(isLoopbackAddress(a)).toBe(false);
  });
});

describe('findProjectRoot', () => {
  it('finds the folder holding package.json from src/ and from a dist/src/ depth', () => {
    const root = findProjectRoot();
    expect(findProjectRoot(pathToFileURL(join(root, 'src', 'sandbox', 'x.js')).href)).toBe(root);
    expect(findProjectRoot(pathToFileURL(join(root, 'dist', 'src', 'sandbox', 'x.js')).href)).toBe(root);
    expect(() => findProjectRoot('file:///x.js')).toThrow(ProjectRootNotFoundError);
  });
});

describe('fixtures loading', () => {
  it('names the file and the problem when the fixtures are invalid', () => {
    expect(() => loadFixtureReports('/nonexistent/reports.json')).toThrow(FixtureFileError);
    const valid = loadFixtureReports()[0]!;
    expect(() => parseFixtureReports([valid, valid])).toThrow(/duplicate slug/);
    expect(() => parseFixtureReports([{ ...valid, score: { ...valid.score, overall: '80' } }])).toThrow(
      FixtureFileError,
    );
  });

  it('serves fixtures passed as an option instead of the file', async () => {
    const valid = loadFixtureReports()[0]!;
    const only = { ...valid, slug: 'only-one', name: 'Only One' };
    const sandbox = createSandbox({ fixtures: [only] });
    expect(sandbox.listReports().map((r) => r.slug)).toEqual(['only-one']);
  });
});

describe('ReportStore.update', () => {
  const base = loadFixtureReports().find((r) => r.published)!;

  it('moves scored_at to now when the score changes and not otherwise', () => {
    const now = new Date('2030-05-06T07:08:09.000Z');
    const store = new ReportStore([base], () => now);
    const unchanged = store.update(base.slug, { geography: 'Elsewhere' });
    expect(unchanged.scoreChanged).toBe(false);
    expect(unchanged.after.score.scored_at).toBe(base.score.scored_at);
    const changed = store.update(base.slug, { score: { band: `${base.score.band}!` } });
    expect(changed.scoreChanged).toBe(true);
    expect(changed.after.score.scored_at).toBe(now.toISOString());
  });

  it('creates an unknown slug only from a whole report', () => {
    const store = new ReportStore([base]);
    expect(statusOf(() => store.update('new-one', { published: true }))).toBe(404);
    const { slug: _slug, ...rest } = base;
    const created = store.update('new-one', { ...rest, name: 'New One' });
    expect(created.before).toBeUndefined();
    expect(store.get('new-one')?.name).toBe('New One');
  });

  it('refuses a patch that changes the slug', () => {
    const store = new ReportStore([base]);
    expect(statusOf(() => store.update(base.slug, { slug: 'other' }))).toBe(400);
  });
});
