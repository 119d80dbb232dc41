import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { parseQuotaHeaders } from '../src/ratelimit/quota-headers.js';
import { type RateGateOptions, RedisRateGate } from '../src/ratelimit/redis-gate.js';
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

/** 6,000 a minute (100 per second, 10 ms apart) is the ceiling in these tests. */
function gate(name: string, extra: Partial<RateGateOptions> = {}): RedisRateGate {
  return new RedisRateGate(redis, `${prefix}:${name}`, {
    max: 100,
    windowMs: 1_000,
    adaptive: { quietMs: 60_000, cutIntervalMs: 0 },
    ...extra,
  });
}

/** Makes the gate's last change look `quietMs` old, as if a quiet minute had passed. */
async function quietPeriodPassed(name: string): Promise<void> {
  await redis.hset(gateKeys(`${prefix}:${name}`).rate, 'at', 0);
}

describe('adaptive RedisRateGate', () => {
  it('runs at the ceiling until a 429 arrives', async () => {
    const g = gate('fresh');
    expect(await g.current()).toEqual({ perMinute: 6_000, burstMs: 1_000, learnt: false });
    const started = Date.now();
    for (let i = 0; i < 50; i++) await g.admit();
    // Half the ceiling's burst, at once.
    expect(Date.now() - started).toBeLessThan(500);
  });

  it('cuts the rate once for a burst of 429s, and again for a request admitted after the cut', async () => {
    let cuts = 0;
    const g = gate('cut', { onCut: () => cuts++ });
    const tickets = await Promise.all(Array.from({ length: 5 }, () => g.admit()));
    for (const t of tickets) await g.refused(t, 0);
    expect(cuts).toBe(1);
    expect((await g.current()).perMinute).toBeCloseTo(6_000 * 0.7, 3);
    const after = await g.admit();
    await g.refused(after, 0);
    expect(cuts).toBe(2);
    expect((await g.current()).perMinute).toBeCloseTo(6_000 * 0.49, 3);
  });

  it('cuts at most once per cut interval, however many pauses a storm of 429s makes', async () => {
    let cuts = 0;
    const g = gate('storm', { onCut: () => cuts++, adaptive: { cutIntervalMs: 60_000 } });
    for (let i = 0; i < 5; i++) await g.refused(await g.admit(), 0);
    expect(cuts).toBe(1);
    expect((await g.current()).perMinute).toBeCloseTo(6_000 * 0.7, 3);
  });

  it('after a cut every holder of the key waits out the pause, then goes at the new spacing without a burst', async () => {
    const a = gate('spacing');
    const b = gate('spacing');
    await a.refused(await a.admit(), 200);
    // No burst: one request per interval.
    expect((await b.current()).burstMs).toBeCloseTo(1_000 / 70, 6);
    const started = Date.now();
    for (let i = 0; i < 11; i++) await (i % 2 ? a : b).admit();
    // 200 ms pause, then 10 more at 1000/70 ms apart (at the ceiling all 11 would pass at once).
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
  });

  it('a pause that ends early or a burst that shrinks leaves no debt beyond one window', async () => {
    const g = gate('early', { reserveMs: 500 });
    await g.refused(await g.admit(), 30_000);
    // The pause is lifted long before its end (an operator, or a test standing for the time passing).
    await redis.del(gateKeys(`${prefix}:early`).pause);
    const started = Date.now();
    for (let i = 0; i < 3; i++) await g.admit();
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('a deferrable lane still gets through once a cut took the burst away', async () => {
    const urgent = gate('lanes');
    const deferrable = gate('lanes', { reserveMs: 500 });
    await urgent.refused(await urgent.admit(), 0);
    const started = Date.now();
    for (let i = 0; i < 5; i++) await deferrable.admit();
    // Five at 1000/70 ms apart; a reserve larger than the burst would hold this lane for ever.
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('raises the rate by a tenth of the ceiling and doubles the burst after a quiet period, up to the ceiling', async () => {
    const g = gate('raise');
    await g.refused(await g.admit(), 100);
    expect((await g.current()).burstMs).toBeLessThan(20);
    await quietPeriodPassed('raise');
    await g.admit();
    const raised = await g.current();
    expect(raised.perMinute).toBeCloseTo(6_000 * 0.8, 3);
    // A burst of a second's worth, then doubling.
    expect(raised.burstMs).toBe(1_000);
    for (let i = 0; i < 5; i++) {
      await quietPeriodPassed('raise');
      await g.admit();
    }
    expect(await g.current()).toMatchObject({ perMinute: 6_000, burstMs: 1_000 });
  });

  it('takes its rate from rate-limit headers, never above the ceiling, and raises stop there', async () => {
    const g = gate('headers');
    await g.quota({ limit: 25, remaining: 20, resetMs: 800, windowMs: 1_000 });
    // 25 a second, paced 2% under the limit and evenly (no burst).
    const stated = await g.current();
    expect(stated.perMinute).toBeCloseTo(1_500 / 1.02, 6);
    expect(stated.burstMs).toBeCloseTo(40 * 1.02, 6);
    await quietPeriodPassed('headers');
    await g.admit();
    expect((await g.current()).perMinute).toBeCloseTo(1_500 / 1.02, 6);

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

  it('a gate without `adaptive` only pauses on a 429 and keeps its rate', async () => {
    const g = new RedisRateGate(redis, `${prefix}:fixed`, { max: 100, windowMs: 1_000 });
    await g.refused(await g.admit(), 300);
    expect(await g.current()).toEqual({ perMinute: 6_000, burstMs: 1_000, learnt: false });
    expect(await redis.pttl(gateKeys(`${prefix}:fixed`).pause)).toBeGreaterThan(200);
  });

  it('never falls below its floor', async () => {
    const g = gate('floor');
    for (let i = 0; i < 20; i++) await g.refused(Number.MAX_SAFE_INTEGER - 20 + i, 0);
    expect((await g.current()).perMinute).toBeCloseTo(6_000 * 0.05, 3);
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
