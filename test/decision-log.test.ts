import { describe, expect, it } from 'vitest';
import { csvCell, decisionsCsv, reviewCsv } from '../src/admin/csv.js';
import {
  compareMarks,
  type Decision,
  DecisionLog,
  markBefore,
  type NewDecision,
} from '../src/decisions/decision-log.js';
import { Keys } from '../src/storage/keys.js';
import { redisUnderOwnPrefix } from './support/redis-prefixes.js';

/** The decision log on the real Redis under a prefix of its own, and the CSV it is exported as. */

const { prefix, redis } = redisUnderOwnPrefix();
const keys = new Keys(prefix);

function decision(recordId: string, overrides: Partial<NewDecision> = {}): NewDecision {
  return {
    action: 'accept',
    bulk: true,
    recordId,
    slug: `slug-${recordId}`,
    by: { kind: 'admin-session', id: 'abc123def456' },
    evidence: { candidates: [{ slug: `slug-${recordId}`, score: 71.5, why: 'same name' }], offered: 2 },
    ...overrides,
  };
}

describe('DecisionLog', () => {
  it('keeps the newest N per installation, newest first, under the installation’s keys', async () => {
    const log = new DecisionLog(redis, keys, 5);
    for (let i = 1; i <= 8; i++) await log.add('inst-a', [decision(`r${i}`)]);
    await log.add('inst-b', [decision('other')]);
    expect(await log.count('inst-a')).toBe(5);
    const latest = await log.latest('inst-a', 3);
    expect(latest.map((d) => d.recordId)).toEqual(['r8', 'r7', 'r6']);
    expect((await log.all('inst-a')).map((d) => d.recordId)).toEqual(['r4', 'r5', 'r6', 'r7', 'r8']);
    expect(latest[0]).toMatchObject({ action: 'accept', by: { kind: 'admin-session', id: 'abc123def456' } });
    expect(Date.parse(latest[0]!.at)).not.toBeNaN();
    expect((await log.all('inst-b')).map((d) => d.recordId)).toEqual(['other']);
    // Deleted with the installation: its key is under the installation's pattern.
    expect(keys.decisions('inst-a').startsWith(keys.inst('inst-a'))).toBe(true);
  });

  it('writes a bulk of decisions in one call, bounded as well', async () => {
    const log = new DecisionLog(redis, keys, 100);
    await log.add(
      'inst-c',
      Array.from({ length: 250 }, (_, i) => decision(`b${i}`)),
    );
    expect(await log.count('inst-c')).toBe(100);
    expect((await log.latest('inst-c', 1))[0]?.recordId).toBe('b249');
  });

  it('skips an entry it cannot read instead of failing the page', async () => {
    const log = new DecisionLog(redis, keys);
    await redis.xadd(keys.decisions('inst-d'), '*', 'e', '{"not":"a decision"}');
    await log.add('inst-d', [decision('ok')]);
    expect((await log.latest('inst-d', 10)).map((d) => d.recordId)).toEqual(['ok']);
  });
});

describe('CSV exports', () => {
  it('escapes commas, quotes and line breaks, and neutralises formulas', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    for (const formula of ['=HYPERLINK("http://x","y")', '+1+2', '-2+3', '@SUM(A1)', '\t=1', '\r=1']) {
      const cell = csvCell(formula);
      expect(cell.replace(/^"/, '').startsWith("'"), formula).toBe(true);
    }
    expect(csvCell('=1,2')).toBe(`"'=1,2"`);
    // A number is ours (a score): a negative one stays a number.
    expect(csvCell(-3.5)).toBe('-3.5');
    expect(csvCell(null)).toBe('');
  });

  it('writes the review queue one row per candidate, with CRLF line ends', () => {
    const csv = reviewCsv([
      {
        recordId: '101',
        name: '=cmd|"/c calc"!A1',
        country: 'DE',
        industry: null,
        at: '2026-01-01T00:00:00.000Z',
        candidates: [
          { slug: 'acme', name: 'Acme, Inc.', score: 80, why: 'same name' },
          { slug: 'acme-2', name: '-Acme', score: null },
        ],
      },
      { recordId: '102', name: 'Empty', country: null, industry: null, at: 'x', candidates: [] },
    ]);
    const lines = csv.split('\r\n');
    expect(lines[0]).toBe(
      'record_id,company,country,industry,queued_at,candidate_rank,candidate_slug,candidate_name,candidate_industry,candidate_stage,candidate_geography,candidate_score,candidate_why',
    );
    expect(lines[1]).toBe(
      `101,"'=cmd|""/c calc""!A1",DE,,2026-01-01T00:00:00.000Z,1,acme,"Acme, Inc.",,,,80,same name`,
    );
    expect(lines[2]).toBe(`101,"'=cmd|""/c calc""!A1",DE,,2026-01-01T00:00:00.000Z,2,acme-2,'-Acme,,,,,`);
    expect(lines[3]).toBe('102,Empty,,,x,,,,,,,,');
    expect(lines[4]).toBe('');
  });

  it('writes decisions with who and the evidence in one cell', () => {
    const d: Decision = {
      id: '1-0',
      at: '2026-01-01T00:00:00.000Z',
      action: 'reject',
      bulk: false,
      recordId: '7',
      slug: null,
      by: { kind: 'crm-user', id: 'userId:5' },
      evidence: {
        candidates: [
          { slug: 'a', score: 60, why: 'similar name' },
          { slug: 'b', score: null, why: null },
        ],
        offered: 2,
      },
    };
    expect(decisionsCsv([d]).split('\r\n')[1]).toBe(
      '2026-01-01T00:00:00.000Z,reject,false,7,,crm-user,userId:5,a (60): similar name; b,2,,,,',
    );
    // A named admin's bulk decision: the name and the mass action it was part of, in the last two columns.
    const named: Decision = {
      ...d,
      by: { kind: 'admin-session', id: 'abcdefabcdef', name: 'alice' },
      evidence: { massId: 'm1' },
    };
    expect(decisionsCsv([named]).split('\r\n')[1]).toBe(
      '2026-01-01T00:00:00.000Z,reject,false,7,,admin-session,abcdefabcdef,,,,,alice,m1',
    );
  });

  it('marks each record as touched at its entry, in the same step, for undo to spare it', async () => {
    const log = new DecisionLog(redis, keys);
    const first = await log.add('inst-t', [decision('t1'), decision('t2')]);
    const second = await log.add('inst-t', [decision('t2')]);
    expect(first).toMatch(/^\d+-\d+$/);
    expect(await log.touchedAfter('inst-t', ['t1', 't2', 'never'], first!)).toEqual(new Set(['t2']));
    expect(await log.touchedAfter('inst-t', ['t1', 't2'], second!)).toEqual(new Set());
    // Decisions logged before the marks existed (an upgrade in place) are found in the log itself.
    const { action, bulk, slug, by, evidence } = decision('old');
    await redis.xadd(
      keys.decisions('inst-t'),
      '*',
      'e',
      JSON.stringify({ action, bulk, recordId: 'old', slug, by, evidence, at: new Date().toISOString() }),
    );
    expect(await log.touchedAfter('inst-t', ['old', 't1', 't2'], second!)).toEqual(new Set(['old']));
    expect(compareMarks('9-5', '10-0')).toBe(-1);
    expect(compareMarks('10-2', '10-10')).toBe(-1);
    expect(compareMarks(markBefore(10), '10-0')).toBe(-1);
    expect(compareMarks(markBefore(10), '9-99')).toBe(1);
  });
});
