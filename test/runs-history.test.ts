import { describe, expect, it } from 'vitest';
import { syncRunsOf } from '../src/app/stores.js';
import { Keys } from '../src/storage/keys.js';
import { emptyBatchResult, KEPT_RUNS } from '../src/storage/runs.js';
import { redisUnderOwnPrefix } from './support/redis-prefixes.js';

/** The sync history is bounded by count: a run that falls out of it takes its keys along. */

const { prefix, redis } = redisUnderOwnPrefix();
const keys = new Keys(prefix);

describe('sync history', () => {
  it(`keeps the newest ${KEPT_RUNS} runs and deletes the keys of older ones`, async () => {
    const runs = syncRunsOf(redis, keys);
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
    // A kept run that is done keeps its summary, not its batches.
    expect(await redis.exists(keys.run(ids[2]!))).toBe(1);
    expect(await redis.exists(keys.runBatches(ids[2]!))).toBe(0);
  });

  it("folds a done run's batches into its summary: the same totals, errors and samples, whatever the run's size", async () => {
    const runs = syncRunsOf(redis, keys);
    const memory = async (key: string) => Number(await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
    let batchesBytes = 0;
    let runBytes = 0;
    for (const batches of [10, 400]) {
      const id = await runs.start('hubspot-2', 'full');
      await runs.listingDone(id, batches);
      for (let b = 0; b < batches; b++) {
        const result = emptyBatchResult();
        result.records = 100;
        result.written = b % 3;
        result.failed = 1;
        result.statuses.matched = 70;
        result.statuses.no_match = 30;
        result.errors = [{ recordId: `r${b}`, code: 'CRM_REJECTED', message: `batch ${b}` }];
        result.samples = [
          { recordId: `s${b}`, name: null, status: 'matched', slug: `slug-${b}`, candidates: [] },
        ];
        // One batch retried: its result is counted once.
        if (b === 1) await runs.recordBatch(id, `b${b}`, result);
        await runs.recordBatch(id, `b${b}`, result);
        if (b === batches - 2) {
          const before = await runs.get(id);
          expect(before?.state).toBe('processing');
          expect(before?.batchesDone).toBe(batches - 1);
          batchesBytes = await memory(keys.runBatches(id));
        }
      }
      const run = await runs.get(id);
      expect(run).toMatchObject({ state: 'done', batchesTotal: batches, batchesDone: batches });
      let written = 0;
      for (let b = 0; b < batches; b++) written += b % 3;
      expect(run?.totals).toMatchObject({
        records: 100 * batches,
        written,
        failed: batches,
        statuses: { matched: 70 * batches, no_match: 30 * batches },
      });
      expect(run?.errors).toHaveLength(Math.min(batches, 200));
      if (batches <= 200) {
        expect(run?.errors).toContainEqual({ recordId: 'r0', code: 'CRM_REJECTED', message: 'batch 0' });
      }
      expect(run?.samples).toHaveLength(10);
      expect(await runs.batchesDone(id)).toBe(batches);
      expect(await redis.exists(keys.runBatches(id))).toBe(0);
      runBytes = await memory(keys.run(id));
    }
    // The bigger run keeps its totals, 200 errors and 10 samples: a fraction of what its batches took.
    expect(runBytes).toBeLessThan(batchesBytes / 3);
  });

  it("folds a stopped run's batches too, and adds a batch that ends after the stop", async () => {
    const runs = syncRunsOf(redis, keys);
    const id = await runs.start('hubspot-3', 'full');
    await runs.listingDone(id, 10);
    const result = (b: number) => {
      const r = emptyBatchResult();
      r.records = 100;
      r.written = 10;
      r.statuses.matched = 100;
      r.errors = [{ recordId: `r${b}`, code: 'CRM_REJECTED', message: `batch ${b}` }];
      return r;
    };
    for (let b = 0; b < 5; b++) await runs.recordBatch(id, `b${b}`, result(b));
    await runs.stop(id, 'stopped by an admin');
    expect(await redis.exists(keys.runBatches(id))).toBe(0);
    expect(await runs.get(id)).toMatchObject({
      state: 'stopped',
      stoppedReason: 'stopped by an admin',
      batchesDone: 5,
      totals: { records: 500, written: 50, statuses: { matched: 500 } },
    });
    // A batch in flight at the stop ends afterwards: it counts, and the run stays stopped.
    await runs.recordBatch(id, 'b5', result(5));
    const after = await runs.get(id);
    expect(after).toMatchObject({ state: 'stopped', batchesDone: 6, totals: { records: 600, written: 60 } });
    expect(after?.errors.map((e) => e.recordId).sort()).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5']);
    expect(await runs.batchesDone(id)).toBe(6);
    // Stopped again (the installation disconnected meanwhile): the new reason, the same counts.
    await runs.stop(id, 'installation disconnected');
    expect(await runs.get(id)).toMatchObject({ stoppedReason: 'installation disconnected', batchesDone: 6 });
  });

  it('counts a listed page once when a killed lister lists it again', async () => {
    const runs = syncRunsOf(redis, keys);
    const id = await runs.start('hubspot-4', 'full');
    await runs.addListed(id, 0, 100);
    await runs.addListed(id, 1, 100);
    // Killed after counting page 1, before saving its place: page 1 comes again.
    await runs.addListed(id, 1, 100);
    await runs.addListed(id, 2, 40);
    expect((await runs.get(id))?.recordsListed).toBe(240);
  });
});
