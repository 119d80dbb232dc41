/**
 * A small seeded generator (mulberry32) for fault schedules: a failing run prints its seed, and
 * `RELIABILITY_SEED=<seed>` replays the same kill points.
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function reliabilitySeed(): number {
  const given = Number(process.env.RELIABILITY_SEED);
  return Number.isInteger(given) && given > 0 ? given : Math.floor(Math.random() * 2 ** 31) + 1;
}
