import { describe, expect, it } from 'vitest';
import { seededRandom } from '../fixtures/seeded-random.js';

/**
 * The committed fixtures, the bench data and the local Salesforce's fault schedules all come from this one
 * generator: a change to its sequence changes every one of them, so the sequence is pinned here (values
 * taken from the copies it replaced).
 */
describe('seededRandom', () => {
  it('gives the mulberry32 sequence of a seed', () => {
    const one = seededRandom(1);
    expect([one(), one(), one()]).toEqual([0.6270739405881613, 0.002735721180215478, 0.5274470399599522]);
    const fixtures = seededRandom(20261121);
    expect([fixtures(), fixtures(), fixtures()]).toEqual([
      0.6913962827529758, 0.3520768517628312, 0.5383691973984241,
    ]);
  });

  it('repeats itself for the same seed and differs for another', () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    const c = seededRandom(43);
    const first = Array.from({ length: 100 }, a);
    expect(Array.from({ length: 100 }, b)).toEqual(first);
    expect(Array.from({ length: 100 }, c)).not.toEqual(first);
    expect(first.every((x) => x >= 0 && x < 1)).toBe(true);
  });
});
