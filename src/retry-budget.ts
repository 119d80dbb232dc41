/**
 * The retry budget, stated once: which layer retries what, and how often. Every layer reads its numbers from
 * here; docs/reliability.md ("Retry budget") explains the stacking. From the inside out:
 *
 * | layer | retries what | how often |
 * |---|---|---|
 * | report client (src/reports/client.ts) | 5xx, network errors, timeouts, a 429 whose Retry-After is short | `reportsHttp` |
 * | HubSpot client (connectors/hubspot/api-client.ts) | 429 of the per-10-s window; 5xx and network errors | `hubspotHttp` |
 * | Salesforce client (connectors/salesforce/api-client.ts) | REQUEST_LIMIT_EXCEEDED, UNABLE_TO_LOCK_ROW | `salesforceHttp` |
 * | HubSpot batch update (`updateBatch`) | a batch refused for naming missing ids, re-sent without them | `hubspotBatchUpdate` |
 * | batch write (`writeUpdates`) | records a write answered RETRYABLE (row locks), in a later call of the batch | `recordRetry.inBatch*` |
 * | pipeline batch (`Pipeline.batch`) | records still RETRYABLE after that, as a new batch (reads from the run's cache) | `recordRetry` |
 * | BullMQ job (queues.ts) | a job that threw anything transient | `job` |
 *
 * Not counted as attempts anywhere: an upstream rate limit or quota pause moves the job to delayed for exactly
 * the wait (workers.ts), and a 401 gets one token refresh and one retry in each CRM client.
 */
export const RETRY_BUDGET = {
  reportsHttp: {
    /** Retries after the first attempt. */
    maxRetries: 3,
    baseDelayMs: 250,
    maxDelayMs: 8_000,
    /** A Retry-After longer than this is not slept through: the 429 goes to the queue (delayed job). */
    maxRetryAfterMs: 30_000,
  },
  hubspotHttp: {
    /** 429s waited out before giving up with CrmRateLimitedError (then the job is delayed). */
    maxRateLimitRetries: 3,
    /** 5xx / network failures retried before giving up with CrmTransientError. */
    maxTransientRetries: 4,
    baseDelayMs: 500,
    maxDelayMs: 8_000,
  },
  salesforceHttp: {
    /** Attempts of one call in all, the first included. */
    attempts: 3,
    baseDelayMs: 1_000,
    maxDelayMs: 8_000,
  },
  hubspotBatchUpdate: {
    /** Sends of one batch in all; what is still refused after them is RETRYABLE for the pipeline. */
    attempts: 3,
  },
  recordRetry: {
    /**
     * Sends of a RETRYABLE record within its own batch after the first, each after `inBatchDelayMs * 2 ** n`:
     * it rides in the batch's next write call instead of a batch (and a write call) of its own.
     */
    inBatchAttempts: 2,
    inBatchDelayMs: 500,
    /** Re-enqueues of the RETRYABLE records of one batch, each after `baseDelayMs * 2 ** n`. */
    attempts: 5,
    baseDelayMs: 1_000,
  },
  job: {
    /** BullMQ attempts in all, with exponential backoff from `baseDelayMs`. */
    attempts: 10,
    baseDelayMs: 1_000,
  },
} as const;
