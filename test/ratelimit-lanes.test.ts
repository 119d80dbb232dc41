import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { RedisRateGate } from '../src/ratelimit/redis-gate.js';
import { closeRedis, createRedis } from '../src/redis.js';
import { REDIS_URL } from './support/redis-url.js';
import { waitFor } from './support/wait.js';

/**
 * Issue 30: realtime work has capacity on a rate gate that a saturating backfill never takes. The gate here
 * has no burst (max 1 per window: evenly spaced, as after a 429's cut), so the burst reserve alone gives the
 * urgent lane nothing; the urgent caller's waiting mark must.
 */

const redis = createRedis(REDIS_URL, 'worker');
const prefix = `rc-test-${randomUUID()}`;

afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  await closeRedis(redis);
});

const INTERVAL_MS = 100;

function gates(identity: string) {
  const options = { max: 1, windowMs: INTERVAL_MS };
  return {
    urgent: new RedisRateGate(redis, identity, options),
    hot: new RedisRateGate(redis, identity, { ...options, lane: 'hot' }),
    deferrable: new RedisRateGate(redis, identity, { ...options, reserveMs: INTERVAL_MS / 2 }),
  };
}

/** Deferrable callers asking without pause until `stop` resolves; counts what they were admitted. */
function saturate(gate: RedisRateGate, callers: number, stop: Promise<void>) {
  const admitted = { n: 0 };
  let stopped = false;
  void stop.then(() => {
    stopped = true;
  });
  const loops = Array.from({ length: callers }, async () => {
    while (!stopped) {
      await gate.acquire();
      if (!stopped) admitted.n++;
    }
  });
  return { admitted, done: Promise.all(loops) };
}

describe('rate gate lanes', () => {
  it('an urgent caller takes the next slot while six deferrable callers saturate the gate', async () => {
    const { urgent, deferrable } = gates(`${prefix}:busy`);
    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => {
      stop = resolve;
    });
    const backfill = saturate(deferrable, 6, stopped);
    // The backfill has the gate to itself first: it gets the whole rate.
    const before = Date.now();
    await waitFor('five backfill admissions', () => (backfill.admitted.n >= 5 ? true : undefined), 5_000, 5);
    const ownPace = (Date.now() - before) / backfill.admitted.n;
    const started = Date.now();
    for (let i = 0; i < 8; i++) await urgent.acquire();
    const urgentMs = Date.now() - started;
    const backfillDuring = backfill.admitted.n;
    stop();
    await backfill.done;
    // Eight urgent slots at one per 100 ms: about 800 ms. Sharing the slots evenly with six callers (the gate
    // without lanes) takes about seven times that.
    expect(urgentMs).toBeLessThan(8 * INTERVAL_MS * 2);
    expect(ownPace).toBeLessThan(INTERVAL_MS * 2);
    expect(backfillDuring).toBeGreaterThan(0);
  });

  it('the deferrable lane gets the whole rate again once no urgent caller waits', async () => {
    const { urgent, deferrable } = gates(`${prefix}:after`);
    await urgent.acquire();
    await urgent.acquire();
    const started = Date.now();
    for (let i = 0; i < 6; i++) await deferrable.acquire();
    // Six slots at 100 ms: the urgent mark lapses within its margin and holds nothing back after that.
    expect(Date.now() - started).toBeLessThan(6 * INTERVAL_MS + 400);
  });

  it("a single change's reads go ahead of a storm's backlog of re-reads on the key (issue 30)", async () => {
    const { urgent, hot } = gates(`${prefix}:storm`);
    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => {
      stop = resolve;
    });
    // A storm's coalesced re-reads (the hot lane's update jobs) saturate the key, as they did after a storm.
    const storm = saturate(hot, 4, stopped);
    await waitFor('five hot admissions', () => (storm.admitted.n >= 5 ? true : undefined), 5_000, 5);
    const started = Date.now();
    for (let i = 0; i < 8; i++) await urgent.acquire();
    const urgentMs = Date.now() - started;
    stop();
    await storm.done;
    // Eight urgent slots at one per 100 ms: about 800 ms; on the same lane as the re-reads, about five times that.
    expect(urgentMs).toBeLessThan(8 * INTERVAL_MS * 2);
  });

  it("a storm's re-reads go ahead of a backfill, and take the slots a single change leaves (issue 30)", async () => {
    const { urgent, hot, deferrable } = gates(`${prefix}:three`);
    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => {
      stop = resolve;
    });
    const backfill = saturate(deferrable, 4, stopped);
    await waitFor('a backfill admission', () => (backfill.admitted.n >= 1 ? true : undefined), 5_000, 5);
    const started = Date.now();
    let hotDone = 0;
    // Single changes beside the hot reads: the hot lane waits for each, and takes the slots between.
    const singles = (async () => {
      for (let i = 0; i < 4; i++) {
        await urgent.acquire();
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    })();
    for (let i = 0; i < 8; i++) {
      await hot.acquire();
      hotDone++;
    }
    await singles;
    const hotMs = Date.now() - started;
    const backfillDuring = backfill.admitted.n;
    stop();
    await backfill.done;
    // Twelve slots (eight hot, four urgent) at one per 100 ms: about 1.2 s; sharing with four backfill callers
    // takes several times that.
    expect(hotDone).toBe(8);
    expect(hotMs).toBeLessThan(12 * INTERVAL_MS * 2);
    expect(backfillDuring).toBeLessThan(6);
  });

  it('holdDeferrable holds the deferrable lane back and lets urgent callers through', async () => {
    const options = { max: 100, windowMs: 1_000 };
    const identity = `${prefix}:held`;
    const urgent = new RedisRateGate(redis, identity, options);
    const deferrable = new RedisRateGate(redis, identity, { ...options, reserveMs: 500 });
    await deferrable.holdDeferrable(600);
    const started = Date.now();
    await urgent.acquire();
    const urgentMs = Date.now() - started;
    await deferrable.acquire();
    const deferrableMs = Date.now() - started;
    expect(urgentMs).toBeLessThan(300);
    expect(deferrableMs).toBeGreaterThanOrEqual(500);
  });
});
