import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { parseQuotaHeaders } from '../src/ratelimit/quota-headers.js';
import {
  ADAPTIVE_DEFAULTS,
  type RateGateOptions,
  RedisRateGate,
  UNCAPPED_PER_MINUTE,
} from '../src/ratelimit/redis-gate.js';
import { closeRedis, createRedis } from '../src/redis.js';
import { gateKeys } from '../src/storage/keys.js';
import { REDIS_URL } from './support/redis-url.js';

const redis = createRedis(REDIS_URL, 'worker');
const prefix = `rc-test-adaptive-${randomUUID()}`;

afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  await closeRedis(redis);
});

/** 6,000 a minute (100 per second, 10 ms apart) is the ceiling in these tests, unless a test sets none. */
function gate(name: string, extra: Partial<RateGateOptions> = {}): RedisRateGate {
  return new RedisRateGate(redis, `${prefix}:${name}`, {
    max: 100,
    windowMs: 1_000,
    adaptive: { cutIntervalMs: 0 },
    ...extra,
  });
}

/** No ceiling: REPORTS_RATE_PER_MINUTE not set. */
function uncapped(name: string, extra: Partial<RateGateOptions> = {}): RedisRateGate {
  return gate(name, { max: UNCAPPED_PER_MINUTE, windowMs: 60_000, ...extra });
}

/**
 * Sets the learner's clock (the slow start's or the last cut's time) `ms` back from now, as if that long had
 * passed with requests sent at `sentPerSecond` all along, and its half-second bucket over: the next admission
 * writes the rate in force.
 */
async function elapse(name: string, ms: number, sentPerSecond = 1_000): Promise<void> {
  const key = gateKeys(`${prefix}:${name}`).rate;
  await redis.hset(key, {
    k0: Date.now() - ms,
    mb: Date.now() - 600,
    mr: sentPerSecond,
    mc: Math.round(sentPerSecond * 0.6),
  });
}

const START = ADAPTIVE_DEFAULTS.startPerMinute;

/**
 * `actual` is `expected`, or a little more: the learner's clock runs on while a request waits for its slot (at
 * a rising rate, a few ms more is a few % more).
 */
function expectRate(actual: number, expected: number): void {
  expect(actual).toBeGreaterThan(expected * 0.97);
  expect(actual).toBeLessThan(expected * 1.25);
}

describe("adaptive RedisRateGate: learning the key's rate", () => {
  it('starts a key at a safe rate, evenly spaced, and doubles it every half second while no 429 comes', async () => {
    const g = uncapped('fresh');
    expect(await g.state()).toMatchObject({ learnt: false, perMinute: START, ceilingPerMinute: null });
    await g.admit();
    expect(await g.state()).toMatchObject({ learnt: true, phase: 'rising', perMinute: START, burstMs: 500 });
    const started = Date.now();
    for (let i = 0; i < 3; i++) await g.admit();
    // Evenly spaced at 2 a second: no burst the key has not shown it accepts.
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    const { doublingMs } = ADAPTIVE_DEFAULTS;
    await elapse('fresh', 3 * doublingMs);
    await g.admit();
    expectRate((await g.current()).perMinute, START * 8);
    await elapse('fresh', 8 * doublingMs);
    await g.admit();
    expectRate((await g.current()).perMinute, START * 256);
  });

  it('never goes above twice the rate measured sent: an idle key ramps up again instead of bursting', async () => {
    const g = uncapped('idle');
    await g.admit();
    await elapse('idle', 20_000, 5);
    await g.admit();
    // Sent 5 a second lately: at most 10 a second now, however long the slow start has run.
    expectRate((await g.current()).perMinute, 600);
  });

  it('cuts on a 429 to a share of the limit it showed, once for a burst of 429s, and pauses every holder', async () => {
    let cuts = 0;
    const g = uncapped('cut', { onCut: () => cuts++ });
    await g.admit();
    await elapse('cut', 3 * ADAPTIVE_DEFAULTS.doublingMs);
    const tickets = await Promise.all(Array.from({ length: 5 }, () => g.admit()));
    for (const t of tickets) await g.refused(t, 300);
    expect(cuts).toBe(1);
    const cut = await g.state();
    // The 429 came at 16 a second (960 a minute) or a little more (the five were spaced at that rate): the
    // margin's share of it is the key's limit, and the rate `cut` of that.
    const { limitMargin } = ADAPTIVE_DEFAULTS;
    expect(cut.limitPerMinute!).toBeGreaterThan(960 * limitMargin * 0.98);
    expect(cut.limitPerMinute!).toBeLessThan(960 * 2 * limitMargin);
    expect(cut.perMinute / (cut.limitPerMinute! * ADAPTIVE_DEFAULTS.cut)).toBeCloseTo(1, 3);
    expect(cut).toMatchObject({ phase: 'recovering', burstMs: expect.any(Number) });
    expect(cut.burstMs).toBeCloseTo(60_000 / cut.perMinute, 6);
    expect(cut.lastCut?.reason).toMatch(/429/);
    expect(await redis.pttl(gateKeys(`${prefix}:cut`).pause)).toBeGreaterThan(200);
    // Another holder of the key waits out the Retry-After too.
    const other = uncapped('cut');
    const started = Date.now();
    await other.admit();
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    // A request admitted after the cut that meets a 429 cuts again.
    await g.refused(await g.admit(), 0);
    expect(cuts).toBe(2);
  });

  it('climbs back to the limit within the recovery time, holds it, then probes past it slowly', async () => {
    const g = uncapped('recover');
    await g.admit();
    await elapse('recover', 3 * ADAPTIVE_DEFAULTS.doublingMs);
    await g.refused(await g.admit(), 0);
    const limit = (await g.state()).limitPerMinute!;
    const { recoverMs, probeMs, probeShare } = ADAPTIVE_DEFAULTS;
    await elapse('recover', recoverMs / 2);
    await g.admit();
    // Half-way: 1 - (1 - cut) × 0.5³ of the limit.
    expectRate((await g.current()).perMinute, limit * (1 - (1 - ADAPTIVE_DEFAULTS.cut) * 0.125));
    await elapse('recover', recoverMs);
    await g.admit();
    expect((await g.current()).perMinute / limit).toBeCloseTo(1, 1);
    expect((await g.state()).phase).toBe('probing');
    await elapse('recover', recoverMs + probeMs);
    await g.admit();
    expectRate((await g.current()).perMinute, limit * (1 + probeShare));
    await elapse('recover', recoverMs + 2 * probeMs);
    await g.admit();
    expectRate((await g.current()).perMinute, limit * (1 + probeShare * 8));
  });

  it('never goes above the ceiling (REPORTS_RATE_PER_MINUTE) nor starts above it', async () => {
    const g = gate('ceiling');
    await g.admit();
    await elapse('ceiling', 20_000);
    await g.admit();
    expect(await g.state()).toMatchObject({ perMinute: 6_000, ceilingPerMinute: 6_000 });
    const low = gate('low-ceiling', { max: 1, windowMs: 1_000 });
    await low.admit();
    expect((await low.state()).perMinute).toBe(60);
  });

  it('reads what the code before the learner stored: its rate in force is where the slow start begins', async () => {
    const key = gateKeys(`${prefix}:older`).rate;
    const at = Date.now() - 5_000;
    // The shape the earlier gate-refused.lua wrote: a cut to 420 a minute, evenly spaced.
    await redis.hset(key, { iv: 60_000 / 420, tol: 60_000 / 420, at, cut: at });
    await redis.pexpire(key, 3_600_000);
    const g = uncapped('older');
    const before = await g.state();
    expect(before).toMatchObject({
      learnt: true,
      perMinute: 420,
      lastCut: { at: new Date(at).toISOString() },
    });
    await g.admit();
    expect(await g.state()).toMatchObject({ phase: 'rising', perMinute: 420 });
    await elapse('older', 2 * ADAPTIVE_DEFAULTS.doublingMs);
    await g.admit();
    expectRate((await g.current()).perMinute, 1_680);
    // Its last cut still counts: a request admitted before it does not cut again.
    let cuts = 0;
    const counted = uncapped('older', { onCut: () => cuts++ });
    await counted.refused(at - 1, 0);
    expect(cuts).toBe(0);
  });

  it('a pause that ends early leaves no debt beyond one interval', async () => {
    const g = gate('early', { reserveMs: 500 });
    await g.refused(await g.admit(), 30_000);
    // The pause is lifted long before its end (an operator, or a test standing for the time passing).
    await redis.del(gateKeys(`${prefix}:early`).pause);
    const started = Date.now();
    for (let i = 0; i < 3; i++) await g.admit();
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('a deferrable lane gets through an evenly spaced gate', async () => {
    const urgent = gate('lanes');
    const deferrable = gate('lanes', { reserveMs: 500 });
    await urgent.admit();
    await elapse('lanes', 3 * ADAPTIVE_DEFAULTS.doublingMs);
    await urgent.refused(await urgent.admit(), 0);
    const started = Date.now();
    for (let i = 0; i < 5; i++) await deferrable.admit();
    // A reserve larger than the burst would hold this lane for ever.
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('takes its rate from rate-limit headers, never above the ceiling, and holds it there', async () => {
    const g = gate('headers');
    await g.quota({ limit: 25, remaining: 20, resetMs: 800, windowMs: 1_000 });
    // 25 a second, paced 2% under the limit and evenly (no burst).
    const stated = await g.current();
    expect(stated.perMinute).toBeCloseTo(1_500 / 1.02, 6);
    expect(stated.burstMs).toBeCloseTo(40 * 1.02, 6);
    await g.admit();
    await elapse('headers', 60_000);
    await g.admit();
    expect((await g.current()).perMinute).toBeCloseTo(1_500 / 1.02, 6);
    expect((await g.state()).phase).toBe('stated');

    const generous = gate('generous');
    await generous.quota({ limit: 1_000, remaining: 999, resetMs: 1_000, windowMs: 1_000 });
    expect((await generous.current()).perMinute).toBe(6_000);
  });

  it('without a stated window takes the longest reset seen as the window', async () => {
    const g = gate('unstated', { max: 6_000, windowMs: 60_000 });
    await g.quota({ limit: 600, remaining: 500, resetMs: 40_000 });
    expect((await g.current()).perMinute).toBeCloseTo(900 / 1.02, 6);
    await g.quota({ limit: 600, remaining: 599, resetMs: 60_000 });
    expect((await g.current()).perMinute).toBeCloseTo(600 / 1.02, 6);
  });

  it('a 429 that states the quota pauses without a cut', async () => {
    let cuts = 0;
    const g = gate('stated-429', { onCut: () => cuts++ });
    await g.refused(await g.admit(), 300, { limit: 50, remaining: 0, resetMs: 300, windowMs: 1_000 });
    expect(cuts).toBe(0);
    expect((await g.current()).perMinute).toBeCloseTo(3_000 / 1.02, 6);
    expect(await redis.pttl(gateKeys(`${prefix}:stated-429`).pause)).toBeGreaterThan(200);
  });

  it('a 429 with a long Retry-After pauses every holder without a cut', async () => {
    let cuts = 0;
    const g = uncapped('long-pause', { onCut: () => cuts++ });
    await g.refused(await g.admit(), 40_000);
    expect(cuts).toBe(0);
    expect((await g.state()).lastCut).toBeNull();
    expect(await redis.pttl(gateKeys(`${prefix}:long-pause`).pause)).toBeGreaterThan(30_000);
  });

  it('a gate without `adaptive` only pauses on a 429 and keeps its rate', async () => {
    const g = new RedisRateGate(redis, `${prefix}:fixed`, { max: 100, windowMs: 1_000 });
    await g.refused(await g.admit(), 300);
    expect(await g.current()).toEqual({ perMinute: 6_000, burstMs: 1_000, learnt: false });
    expect(await redis.pttl(gateKeys(`${prefix}:fixed`).pause)).toBeGreaterThan(200);
  });

  it('cuts at most once per cut interval, and never falls below its floor', async () => {
    let cuts = 0;
    const storm = gate('storm', { onCut: () => cuts++, adaptive: { cutIntervalMs: 60_000 } });
    for (let i = 0; i < 5; i++) await storm.refused(await storm.admit(), 0);
    expect(cuts).toBe(1);
    const g = gate('floor');
    for (let i = 0; i < 20; i++) await g.refused(Number.MAX_SAFE_INTEGER - 20 + i, 0);
    expect((await g.current()).perMinute).toBeCloseTo(ADAPTIVE_DEFAULTS.floorPerMinute, 3);
  });
});

describe('parseQuotaHeaders', () => {
  const h = (init: Record<string, string>) => new Headers(init);

  it('reads the IETF draft headers with the window from RateLimit-Policy or the limit', () => {
    expect(
      parseQuotaHeaders(
        h({
          'ratelimit-limit': '25',
          'ratelimit-remaining': '3',
          'ratelimit-reset': '1',
          'ratelimit-policy': '25;w=1',
        }),
      ),
    ).toEqual({ limit: 25, remaining: 3, resetMs: 1_000, windowMs: 1_000 });
    expect(
      parseQuotaHeaders(
        h({
          'ratelimit-limit': '100, 100;w=60, 1000;w=3600',
          'ratelimit-remaining': '7',
          'ratelimit-reset': '30',
        }),
      ),
    ).toEqual({ limit: 100, remaining: 7, resetMs: 30_000, windowMs: 60_000 });
  });

  it('reads the structured form of the later drafts', () => {
    expect(
      parseQuotaHeaders(h({ ratelimit: '"default";r=50;t=30', 'ratelimit-policy': '"default";q=100;w=60' })),
    ).toEqual({ limit: 100, remaining: 50, resetMs: 30_000, windowMs: 60_000 });
  });

  it('reads X-RateLimit-* with Reset as a delay or as Unix seconds', () => {
    expect(
      parseQuotaHeaders(
        h({ 'x-ratelimit-limit': '600', 'x-ratelimit-remaining': '10', 'x-ratelimit-reset': '12' }),
      ),
    ).toEqual({ limit: 600, remaining: 10, resetMs: 12_000 });
    const now = 1_764_000_000_000;
    expect(
      parseQuotaHeaders(
        h({ 'x-ratelimit-limit': '5000', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1764000042' }),
        now,
      ),
    ).toEqual({ limit: 5_000, remaining: 0, resetMs: 42_000 });
  });

  it('ignores headers it cannot read', () => {
    expect(parseQuotaHeaders(h({}))).toBeUndefined();
    expect(
      parseQuotaHeaders(h({ 'ratelimit-limit': 'lots', 'ratelimit-remaining': '1', 'ratelimit-reset': '1' })),
    ).toBeUndefined();
    expect(
      parseQuotaHeaders(
        h({ 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '-1', 'x-ratelimit-reset': '1' }),
      ),
    ).toBeUndefined();
    expect(
      parseQuotaHeaders(
        h({ 'x-ratelimit-limit': '0', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1' }),
      ),
    ).toBeUndefined();
  });
});
