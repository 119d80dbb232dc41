import { describe, expect, it } from 'vitest';
import { HUBSPOT_LIMITS } from '../connectors/hubspot/provider.js';
import { BULK_THRESHOLD, SALESFORCE_LIMITS } from '../connectors/salesforce/provider.js';
import {
  batchIdOf,
  FIRST_BATCH_RECORDS,
  isRunsFirstBatch,
  pageBatches,
} from '../src/pipeline/batch/sizing.js';
import type { BatchJob } from '../src/pipeline/batch-job.js';
import { batch } from '../src/pipeline/handlers/batch.js';
import type { Pipeline } from '../src/pipeline/pipeline.js';

/**
 * Issue 30: a run's first batch is small, so that its first CRM write waits for a few searches and reads only
 * (a full one waited more than a minute at 10 reads a second beside the run's other batches); every later
 * batch is the CRM's write size, or its bulk threshold where it has a bulk API.
 */

const ids = (n: number) => Array.from({ length: n }, (_, i) => `r${i}`);
const sizes = (batches: string[][]) => batches.map((b) => b.length);
const hubspot = { writeBatchSize: HUBSPOT_LIMITS.writeBatchSize };
const salesforce = { writeBatchSize: SALESFORCE_LIMITS.writeBatchSize, bulkThreshold: BULK_THRESHOLD };

describe('a listed page into batches', () => {
  it('the first page starts with a small batch; later pages are whole write batches', () => {
    expect(sizes(pageBatches(ids(100), 0, hubspot))).toEqual([
      FIRST_BATCH_RECORDS,
      100 - FIRST_BATCH_RECORDS,
    ]);
    expect(sizes(pageBatches(ids(100), 1, hubspot))).toEqual([100]);
    expect(sizes(pageBatches(ids(250), 3, hubspot))).toEqual([100, 100, 50]);
  });

  it('a Salesforce org starts small, then Bulk-sized batches where they reach the threshold, collection-sized below it', () => {
    // A single batch of 475 kept a whole backfill on one worker under worker kills (nothing written for minutes).
    expect(sizes(pageBatches(ids(500), 0, salesforce))).toEqual([FIRST_BATCH_RECORDS, 200, 200, 75]);
    expect(sizes(pageBatches(ids(2000), 1, salesforce))).toEqual([2000]);
    expect(sizes(pageBatches(ids(2500), 1, salesforce))).toEqual([2000, 200, 200, 100]);
    expect(sizes(pageBatches(ids(2000), 0, salesforce))).toEqual([
      FIRST_BATCH_RECORDS,
      ...Array(9).fill(200),
      175,
    ]);
  });

  it('keeps every record once, in order', () => {
    const records = ids(437);
    expect(pageBatches(records, 0, hubspot).flat()).toEqual(records);
    expect(pageBatches(records, 0, salesforce).flat()).toEqual(records);
  });

  it('a page no larger than the first batch is one batch; an empty page none', () => {
    expect(sizes(pageBatches(ids(FIRST_BATCH_RECORDS), 0, hubspot))).toEqual([FIRST_BATCH_RECORDS]);
    expect(pageBatches([], 0, hubspot)).toEqual([]);
  });

  it('500 changed records cost at most 6 HubSpot write calls and 4 Salesforce collections', () => {
    const calls = (batches: string[][], writeSize: number) =>
      batches.reduce((a, b) => a + Math.ceil(b.length / writeSize), 0);
    const hubspotPages = [0, 1, 2, 3, 4].flatMap((p) => pageBatches(ids(100), p, hubspot));
    expect(calls(hubspotPages, 100)).toBe(6);
    expect(calls(pageBatches(ids(500), 0, salesforce), 200)).toBe(4);
  });
});

describe("a run's first batch on the report key", () => {
  /** Runs the batch handler up to the point it opens its CRM and report clients, and keeps how it asked. */
  async function openedAs(job: BatchJob): Promise<{ urgent?: boolean }> {
    const seen: { urgent?: boolean }[] = [];
    const stop = new Error('stop after open');
    const pipeline = {
      deps: {
        runs: { supersededBy: async () => null },
        runtime: {
          open: async (_id: string, options: { urgent?: boolean }) => {
            seen.push(options);
            throw stop;
          },
        },
      },
    } as unknown as Pipeline;
    await expect(batch(pipeline, job)).rejects.toBe(stop);
    return seen[0]!;
  }
  const job = (batchId: string, runId: string | null): BatchJob => ({
    installationId: 'hubspot-1',
    batchId,
    mode: 'incremental',
    recordIds: ['r1'],
    origin: runId ? { kind: 'sync', runId } : { kind: 'refresh' },
  });

  it('goes first (urgent): at a slow key beside its run’s other batches it was killed before it wrote', async () => {
    expect((await openedAs(job(batchIdOf(0, 0), 'run-1'))).urgent).toBe(true);
    expect((await openedAs(job(batchIdOf(0, 1), 'run-1'))).urgent).toBe(false);
    expect((await openedAs(job(batchIdOf(1, 0), 'run-1'))).urgent).toBe(false);
  });

  it('event-driven batches stay urgent', async () => {
    expect((await openedAs(job('slug-0', null))).urgent).toBe(true);
  });

  it('knows the first batch by its id and its retries’ ids', () => {
    expect(isRunsFirstBatch(batchIdOf(0, 0))).toBe(true);
    expect(isRunsFirstBatch(`${batchIdOf(0, 0)}-retry2`)).toBe(true);
    expect(isRunsFirstBatch(batchIdOf(0, 1))).toBe(false);
    expect(isRunsFirstBatch(batchIdOf(10, 0))).toBe(false);
  });
});
