import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Keys } from '../src/pipeline/keys.js';
import { emptyBatchResult, KEPT_RUNS, SyncRuns } from '../src/pipeline/runs.js';
import { deleteKeysWithPrefix } from '../src/redis.js';
import { REDIS_URL } from './support/redis-url.js';

/** The sync history is bounded by count: a run that falls out of it takes its keys along. */

const prefix = `rc-test-${randomUUID().slice(0, 8)}`;
const keys = new Keys(prefix);
let redis: Redis;

beforeAll(() => {
  redis = new Redis(REDIS_URL);
});
afterAll(async () => {
  await deleteKeysWithPrefix(REDIS_URL, prefix);
  redis.disconnect();
});

describe('sync history', () => {
  it(`keeps the newest ${KEPT_RUNS} runs and deletes the keys of older ones`, async () => {
    const runs = new SyncRuns(redis, keys);
    const ids: string[] = [];
    for (let i = 0; i < KEPT_RUNS + 2; i++) {
      const id = await runs.start('hubspot-1', 'reconcile');
      await runs.listingDone(id, 1);
      await runs.recordBatch(id, 'b0', emptyBatchResult());
      ids.push(id);
    }
    const recent = await runs.recent('hubspot-1', 100);
    expect(recent.map((r) => r.id)).toEqual(ids.slice(2).reverse());
    for (const old of ids.slice(0, 2)) {
      expect(await redis.exists(keys.run(old), keys.runBatches(old)), old).toBe(0);
    }
    expect(await redis.exists(keys.run(ids[2]!), keys.runBatches(ids[2]!))).toBe(2);
  });
});
