import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { identityOf, RedisRateGate } from '../src/ratelimit/redis-gate.js';
import { closeRedis, createRedis } from '../src/redis.js';
import { REDIS_URL } from './support/redis-url.js';

const redis = createRedis(REDIS_URL, 'worker');
const prefix = `rc-test-${randomUUID()}`;

afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  await closeRedis(redis);
});

describe('RedisRateGate', () => {
  it('lets a burst of max through, then spaces requests across processes sharing the identity', async () => {
    const identity = `${prefix}:a`;
    // Two gate objects stand for two processes.
    const a = new RedisRateGate(redis, identity, { max: 10, windowMs: 1000 });
    const b = new RedisRateGate(redis, identity, { max: 10, windowMs: 1000 });
    const started = Date.now();
    await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).acquire()));
    const burst = Date.now() - started;
    await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).acquire()));
    const total = Date.now() - started;
    expect(burst).toBeLessThan(500);
    // 20 requests at 10 per second need about one more second after the burst.
    expect(total).toBeGreaterThanOrEqual(900);
  });

  it('a pause holds every holder of the identity and no other identity', async () => {
    const waits: number[] = [];
    const slow = new RedisRateGate(redis, `${prefix}:slow`, {
      max: 100,
      windowMs: 1000,
      onWait: (ms) => waits.push(ms),
    });
    const other = new RedisRateGate(redis, `${prefix}:other`, { max: 100, windowMs: 1000 });
    await slow.pause(300);
    const t0 = Date.now();
    await other.acquire();
    expect(Date.now() - t0).toBeLessThan(100);
    await slow.acquire();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    expect(waits.length).toBeGreaterThan(0);
  });

  it('a shorter pause never cuts a longer one short', async () => {
    const gate = new RedisRateGate(redis, `${prefix}:p`, { max: 100, windowMs: 1000 });
    await gate.pause(400);
    await gate.pause(50);
    expect(await redis.pttl(`${prefix}:p:pause`)).toBeGreaterThan(300);
  });

  it('names an API key without revealing it', () => {
    const id = identityOf('sk_sandbox_read');
    expect(id).toMatch(/^[0-9a-f]{16}$/);
    expect(id).not.toContain('sandbox');
    expect(identityOf('sk_sandbox_read')).toBe(id);
    expect(identityOf('sk_sandbox_write')).not.toBe(id);
  });
});
