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
