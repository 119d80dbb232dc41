import { type BatchResult, emptyBatchResult, MAX_ERRORS_PER_BATCH } from '../../storage/runs.js';

/** The counts one batch reports to its run, with at most MAX_ERRORS_PER_BATCH failures kept in full. */
export class BatchTally {
  readonly result: BatchResult = emptyBatchResult();
  /** Records the CRM asked us to try again (row locks). */
  readonly retryRecordIds: string[] = [];

  fail(recordId: string, code: string, message: string): void {
    this.result.failed += 1;
    if (this.result.errors.length < MAX_ERRORS_PER_BATCH)
      this.result.errors.push({ recordId, code, message });
  }
}
