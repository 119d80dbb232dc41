import { describe, expect, it } from 'vitest';
import { evaluate, type MatchCase } from '../src/matching/evaluate.js';

const acme = { slug: 'acme', name: 'Acme Robotics GmbH', geography: 'Berlin, Germany', industry: 'Robotics' };
const acmeUk = { slug: 'acme-uk', name: 'Acme Robotics Ltd', geography: 'Leeds, UK', industry: 'Robotics' };
const close = {
  slug: 'close',
  name: 'Acme Robotic Systems',
  geography: 'Berlin, Germany',
  industry: 'Robotics',
};

function matchCase(
  id: string,
  company: MatchCase['company'],
  candidates: MatchCase['candidates'],
  expected: string | null,
): MatchCase {
  return { id, kind: 'true_match', company, candidates, expected };
}

describe('evaluate', () => {
  it('counts links, wrong links, misses and reviews', () => {
    const cases: MatchCase[] = [
      // Linked to the expected report.
      matchCase('right', { name: 'Acme Robotics', country: 'DE' }, [acme, close], 'acme'),
      // Linked, but the label says this is another company: a wrong link.
      matchCase('wrong', { name: 'Acme Robotics', country: 'DE' }, [acme], null),
      // Left for review although the report is there: missed.
      matchCase('review', { name: 'Acme Robotic', country: 'DE' }, [acme], 'acme'),
      // Nothing plausible, and nothing expected: fine.
      matchCase('none', { name: 'Wobbleworth Toys' }, [acmeUk], null),
      // The name cannot be searched: the candidates are never seen, so the report is missed.
      matchCase('unsearchable', { name: 'アクメ', country: 'DE' }, [acme], 'acme'),
      // Linked to a namesake instead of the expected report: wrong and missed.
      matchCase('namesake', { name: 'Acme Robotics', country: 'UK' }, [acmeUk], 'acme'),
    ];
    const quality = evaluate(cases);
    expect(quality).toMatchObject({
      total: 6,
      linked: 3,
      correctLinks: 1,
      wrongLinks: 2,
      expectedLinks: 4,
      missed: 3,
      needsReview: 1,
      wrongLinkIds: ['wrong', 'namesake'],
      missedIds: ['review', 'unsearchable', 'namesake'],
    });
    expect(quality.precision).toBeCloseTo(1 / 3);
    expect(quality.recall).toBeCloseTo(1 / 4);
    expect(quality.byKind.true_match).toEqual({ total: 6, correct: 1, wrong: 2, needsReview: 1, noMatch: 2 });
  });

  it('reports precision 1 and recall 1 for an empty set', () => {
    expect(evaluate([])).toMatchObject({ precision: 1, recall: 1, total: 0, wrongLinks: 0, missed: 0 });
  });
});
