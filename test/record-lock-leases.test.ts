import { describe, expect, it } from 'vitest';
import { HOLDER_ALIVE_MS } from '../src/storage/lock-holder.js';
import { LOCK_LEASE_MS, lockRecords, RecordLockTimeoutError } from '../src/storage/record-locks.js';
import { LockHolderProcess } from './support/lock-holder-process.js';
import { redisUnderOwnPrefix } from './support/redis-prefixes.js';
import { waitFor } from './support/wait.js';

/**
 * Issue 30: record locks are leases of at most LOCK_LEASE_MS, renewed while their holder lives. The holder that
 * dies here is another OS process, SIGKILLed, as a worker is; the leases are short (a parameter) so the test
 * takes seconds.
 */

const { prefix, redis } = redisUnderOwnPrefix('worker');

const LEASE_MS = 600;

describe('record lock leases', () => {
  it('a lock lasts at most LOCK_LEASE_MS without its holder, whatever the caller asks', async () => {
    const key = `${prefix}:{inst}:lock:default`;
    const held = await lockRecords(redis, [key]);
    const other = await lockRecords(redis, [`${prefix}:{inst}:lock:long`], { ttlMs: 60_000 });
    expect(LOCK_LEASE_MS).toBeLessThanOrEqual(15_000);
    expect(await redis.pttl(key)).toBeLessThanOrEqual(LOCK_LEASE_MS);
    expect(await redis.pttl(`${prefix}:{inst}:lock:long`)).toBeLessThanOrEqual(LOCK_LEASE_MS);
    await held.release();
    await other.release();
  });

  it('a holder that lives keeps its locks past many leases; release frees them at once', async () => {
    const keys = [`${prefix}:{inst}:lock:a`, `${prefix}:{inst}:lock:b`];
    const holder = await lockRecords(redis, keys, { ttlMs: LEASE_MS });
    // Three leases long, a contender is refused throughout.
    await expect(
      lockRecords(redis, keys.slice(1), { ttlMs: LEASE_MS, waitMs: 3 * LEASE_MS }),
    ).rejects.toBeInstanceOf(RecordLockTimeoutError);
    expect(holder.held()).toBe(true);
    await holder.release();
    const started = Date.now();
    const next = await lockRecords(redis, keys, { ttlMs: LEASE_MS, waitMs: 1_000 });
    expect(Date.now() - started).toBeLessThan(LEASE_MS / 2);
    await next.release();
  });

  it('the locks of a SIGKILLed holder are taken by another within the lease', {
    timeout: 180_000,
  }, async () => {
    const keys = [`${prefix}:{inst}:lock:k1`, `${prefix}:{inst}:lock:k2`];
    const holder = await LockHolderProcess.start(keys, { ttlMs: LEASE_MS });
    try {
      // Alive, it renews: four leases later the locks are still its own.
      await expect(
        lockRecords(redis, keys, { ttlMs: LEASE_MS, waitMs: 4 * LEASE_MS }),
      ).rejects.toBeInstanceOf(RecordLockTimeoutError);
      await holder.kill();
      const killedAt = Date.now();
      const taken = await lockRecords(redis, keys, { ttlMs: LEASE_MS, waitMs: 10 * LEASE_MS });
      const freeAfter = Date.now() - killedAt;
      await taken.release();
      // Within the lease and the contender's back-off (at most 500 ms between attempts).
      expect(freeAfter).toBeLessThanOrEqual(LEASE_MS + 600);
    } finally {
      await holder.kill();
    }
  });
});

describe('record lock holders', () => {
  const holders = `${prefix}:{inst}:lock-holders`;

  it('the locks of a SIGKILLed holder are taken once it stops beating, long before their lease', {
    timeout: 180_000,
  }, async () => {
    const keys = [`${prefix}:{inst}:lock:h1`, `${prefix}:{inst}:lock:h2`];
    // The full lease: before holders, a contender waited all of it.
    const holder = await LockHolderProcess.start(keys, { holders });
    try {
      // Alive, it beats: past twice the time a silent holder counts as alive, the locks are still its own.
      await expect(lockRecords(redis, keys, { holders, waitMs: 2 * HOLDER_ALIVE_MS })).rejects.toBeInstanceOf(
        RecordLockTimeoutError,
      );
      await holder.kill();
      const killedAt = Date.now();
      const taken = await lockRecords(redis, keys, { holders, waitMs: LOCK_LEASE_MS });
      const freeAfter = Date.now() - killedAt;
      expect(taken.held()).toBe(true);
      await taken.release();
      // Within the time a holder counts as alive after its last beat and the contender's back-off.
      expect(freeAfter).toBeLessThanOrEqual(HOLDER_ALIVE_MS + 600);
    } finally {
      await holder.kill();
    }
  });

  it('a holder whose event loop stalled past its beats no longer trusts its locks, even once it beats again', async () => {
    const keys = [`${prefix}:{inst}:lock:s1`];
    const locks = await lockRecords(redis, keys, { holders });
    expect(locks.held()).toBe(true);
    // No timer runs meanwhile: no beat, so a contender may have taken the locks.
    const until = Date.now() + HOLDER_ALIVE_MS + 100;
    while (Date.now() < until) {
      // stalled on purpose
    }
    expect(locks.held()).toBe(false);
    const beatenAt = Date.now();
    await waitFor(
      'a beat after the stall',
      async () => {
        const aliveUntil = Number(await redis.hget(holders, await holderIdOf(keys[0]!)));
        return aliveUntil > beatenAt ? true : undefined;
      },
      5_000,
    );
    expect(locks.held()).toBe(false);
    await locks.release();
  });

  it('a lock without a holder (taken by code from before holders) lasts its lease for a contender with one', async () => {
    const keys = [`${prefix}:{inst}:lock:old`];
    await redis.set(keys[0]!, 'an-old-token', 'PX', 60_000);
    await expect(lockRecords(redis, keys, { holders, waitMs: 300 })).rejects.toBeInstanceOf(
      RecordLockTimeoutError,
    );
    await redis.del(keys[0]!);
  });
});

async function holderIdOf(lock: string): Promise<string> {
  const value = (await redis.get(lock)) ?? '';
  return value.slice(value.lastIndexOf('|') + 1);
}
