/**
 * The retry budget, stated once: which layer retries what, and how often. Every layer reads its numbers from
 * here, and each CRM's client layers from its provider (`retryBudget`, connectors/<crm>/retry-budget.ts);
 * docs/reliability.md ("Retry budget") explains the stacking. From the inside out:
 *
 * | layer | retries what | how often |
 * |---|---|---|
 * | report client (src/reports/client.ts) | 5xx, network errors, timeouts, a 429 whose Retry-After is short | `reportsHttp` |
 * | each CRM's client layers | what its provider's `retryBudget` says | the provider's `retryBudget` |
 * | batch write (`writeUpdates`) | records a write answered RETRYABLE (row locks), in a later call of the batch | `recordRetry.inBatch*` |
 * | pipeline batch (`enrich-now.ts`) | records still RETRYABLE after that, as a new batch, whoever ran the first (a run, an event, an admin) | `recordRetry` |
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
