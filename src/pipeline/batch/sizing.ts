import { chunk } from '../../util/chunk.js';

/**
 * Records in a run's first batch. Its first CRM write waits for nothing but their searches and reads (about
 * 1.3 requests a record), and it goes first on the report key (an urgent caller: the run's other batches hold
 * back meanwhile, handlers/batch.ts): 25 records are about 33 requests, which at 10 requests a second land the
 * first write within 5 s. A full first batch (100, or a Bulk-sized one) would wait minutes under a slow
 * key, killed and started again before it ever wrote. It costs one write call per run: 500 records
 * are 6 calls in batches of 100 (25, 75, 100 × 4) and 4 in collections of 200 (25, 200, 200, 75).
 */
export const FIRST_BATCH_RECORDS = 25;

/** The id list.ts gives a page's batch: `<page>-<index>`. */
export function batchIdOf(page: number, index: number): string {
  return `${page}-${index}`;
}

/** Whether a batch id (or its retry's, `…-retryN`) is a run's first batch. */
export function isRunsFirstBatch(batchId: string): boolean {
  return batchId.replace(/-retry\d+$/, '') === batchIdOf(0, 0);
}

/**
 * One listed page's batches: the CRM's write size, or its bulk threshold where it has a bulk API and the batch
 * reaches it (one write per batch either way); the first page starts with a batch of FIRST_BATCH_RECORDS.
 * What would be a Bulk-sized batch below the threshold is written in write-size calls anyway, so it is cut
 * into write-size batches, at the same calls when every record changed: one batch of 475 records held the
 * run's whole backfill on one worker, wrote nothing until its last record was read, and came back only after
 * its lock lapsed each time its worker was killed (under kills every 5-10 s, nothing written for minutes);
 * write-size batches spread over the workers and each writes as it ends.
 */
export function pageBatches<T>(
  records: T[],
  page: number,
  limits: { writeBatchSize: number; bulkThreshold?: number | undefined },
): T[][] {
  const size = Math.max(limits.writeBatchSize, limits.bulkThreshold ?? 0);
  const rest =
    page > 0 || records.length <= FIRST_BATCH_RECORDS ? records : records.slice(FIRST_BATCH_RECORDS);
  const batches = chunk(rest, size).flatMap((b) =>
    b.length >= size ? [b] : chunk(b, limits.writeBatchSize),
  );
  return rest === records ? batches : [records.slice(0, FIRST_BATCH_RECORDS), ...batches];
}
