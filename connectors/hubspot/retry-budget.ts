import type { CrmRetryLayer } from '../../src/crm/provider.js';

/**
 * HubSpot's layers of the retry budget (src/retry-budget.ts states how the layers stack): the API client and
 * the batch update. The provider hands them to the application as `retryBudget`.
 */
export const HUBSPOT_RETRY_BUDGET = {
  http: {
    retries:
      'HubSpot client (connectors/hubspot/api/api-client.ts): 429 of the per-10-s window; 5xx and network errors',
    budget: {
      /** 429s waited out before giving up with CrmRateLimitedError (then the job is delayed). */
      maxRateLimitRetries: 3,
      /** 5xx / network failures retried before giving up with CrmTransientError. */
      maxTransientRetries: 4,
      baseDelayMs: 500,
      maxDelayMs: 8_000,
    },
  },
  batchUpdate: {
    retries:
      'HubSpot batch update (`updateBatch`): a batch refused for naming missing ids, re-sent without them',
    budget: {
      /** Sends of one batch in all; what is still refused after them is RETRYABLE for the pipeline. */
      attempts: 3,
    },
  },
} as const satisfies Record<string, CrmRetryLayer>;
