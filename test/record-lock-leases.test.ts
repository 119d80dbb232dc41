import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { closeRedis, createRedis } from '../src/redis.js';
import { LOCK_LEASE_MS, lockRecords, RecordLockTimeoutError } from '../src/storage/record-locks.js';
import { REDIS_URL } from './support/redis-url.js';
import { waitFor } from './support/wait.js';
import { buildWorkerCli, TEST_BUILD_DIR } from './support/worker-process.js';

/**
 * Issue 30: record locks are leases of at most LOCK_LEASE_MS, renewed while their holder lives. The holder that
 * dies here is another OS process, SIGKILLed, as a worker is; the leases are short (a parameter) so the test
 * takes seconds.
 */

const redis = createRedis(REDIS_URL, 'worker');
const prefix = `rc-test-${randomUUID()}`;

afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  await closeRedis(redis);
});

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
    await buildWorkerCli();
    const keys = [`${prefix}:{inst}:lock:k1`, `${prefix}:{inst}:lock:k2`];
    const moduleUrl = (path: string) => pathToFileURL(join(TEST_BUILD_DIR, path)).href;
    // The holder: another process taking the locks through the same code, then idling until killed.
    const script = `
      const { createRedis } = await import(${JSON.stringify(moduleUrl('src/redis.js'))});
      const { lockRecords } = await import(${JSON.stringify(moduleUrl('src/storage/record-locks.js'))});
      const redis = createRedis(${JSON.stringify(REDIS_URL)}, 'worker');
      await lockRecords(redis, ${JSON.stringify(keys)}, { ttlMs: ${LEASE_MS} });
      console.log('held');
      setInterval(() => {}, 1000);
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      await waitFor(
        'the holder process to hold the locks',
        () => (out.includes('held') ? true : undefined),
        30_000,
        20,
      );
      // Alive, it renews: four leases later the locks are still its own.
      await expect(
        lockRecords(redis, keys, { ttlMs: LEASE_MS, waitMs: 4 * LEASE_MS }),
      ).rejects.toBeInstanceOf(RecordLockTimeoutError);
      child.kill('SIGKILL');
      await exited;
      const killedAt = Date.now();
      const taken = await lockRecords(redis, keys, { ttlMs: LEASE_MS, waitMs: 10 * LEASE_MS });
      const freeAfter = Date.now() - killedAt;
      await taken.release();
      // Within the lease and the contender's back-off (at most 500 ms between attempts).
      expect(freeAfter).toBeLessThanOrEqual(LEASE_MS + 600);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});
