import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  decideCase,
  evaluate,
  MATCH_CASE_KINDS,
  type MatchCase,
  matchCaseSchema,
} from '../src/matching/evaluate.js';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'match-cases.json');
const GENERATOR = join(import.meta.dirname, 'fixtures', 'generate-match-cases.ts');
const cases: MatchCase[] = matchCaseSchema.array().parse(JSON.parse(readFileSync(FIXTURE, 'utf8')));

describe('the labelled match set', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'rc-match-cases-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('is what the generator writes', () => {
    const regenerated = join(scratch, 'match-cases.json');
    execFileSync(process.execPath, [GENERATOR, regenerated], { stdio: 'pipe' });
    expect(readFileSync(regenerated, 'utf8')).toBe(readFileSync(FIXTURE, 'utf8'));
  });

  it('is large and varied enough to mean something', () => {
    expect(cases.length).toBeGreaterThanOrEqual(320);
    expect(new Set(cases.map((c) => c.id)).size).toBe(cases.length);
    const perKind = new Map(
      MATCH_CASE_KINDS.map((kind) => [kind, cases.filter((c) => c.kind === kind).length]),
    );
    for (const [kind, count] of perKind) expect(count, kind).toBeGreaterThanOrEqual(5);
    expect(perKind.get('true_match')).toBeGreaterThanOrEqual(150);
    expect(perKind.get('namesake')).toBeGreaterThanOrEqual(40);
    // Both outcomes are represented: companies with a report and companies whose report is not there.
    expect(cases.filter((c) => c.expected === null).length).toBeGreaterThanOrEqual(100);
    // Namesakes in other countries whose own report is absent are the cases a careless matcher links.
    const abroadOnly = cases.filter((c) => c.kind === 'namesake' && c.expected === null);
    expect(abroadOnly.length).toBeGreaterThanOrEqual(20);
  });

  it('labels only slugs that are among the candidates, except for names no search can be made for', () => {
    for (const c of cases) {
      if (c.expected === null) continue;
      const listed = c.candidates.some((candidate) => candidate.slug === c.expected);
      expect(listed || c.candidates.length === 0, c.id).toBe(true);
    }
  });

  it('makes no wrong link and finds at least 90% of the reports', () => {
    const quality = evaluate(cases);
    const wrong = cases
      .filter((c) => quality.wrongLinkIds.includes(c.id))
      .map((c) => ({ id: c.id, note: c.note, decision: decideCase(c).decision }));
    expect(wrong).toEqual([]);
    expect(quality.precision).toBe(1);
    expect(quality.recall).toBeGreaterThanOrEqual(0.9);
  });

  it('links every case whose names differ only in formatting and legal form, given a place that agrees', () => {
    // The true matches are the bulk of real data: losing more than a handful would make recall hollow.
    const quality = evaluate(cases.filter((c) => c.kind === 'true_match'));
    expect(quality.recall).toBeGreaterThanOrEqual(0.97);
  });
});
