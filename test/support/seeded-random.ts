export { seededRandom } from '../../fixtures/seeded-random.js';

/**
 * The seed of a fault schedule: a failing run prints its seed, and `RELIABILITY_SEED=<seed>` replays the same
 * kill points.
 */
export function reliabilitySeed(): number {
  const given = Number(process.env.RELIABILITY_SEED);
  return Number.isInteger(given) && given > 0 ? given : Math.floor(Math.random() * 2 ** 31) + 1;
}
