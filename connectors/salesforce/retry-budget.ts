import type { CrmRetryLayer } from '../../src/crm/provider.js';

/**
 * Salesforce's layer of the retry budget (src/retry-budget.ts states how the layers stack): the API client.
 * The provider hands it to the application as `retryBudget`.
 */
export const SALESFORCE_RETRY_BUDGET = {
  http: {
    retries:
      'Salesforce client (connectors/salesforce/api/api-client.ts): REQUEST_LIMIT_EXCEEDED, UNABLE_TO_LOCK_ROW',
    budget: {
      /** Attempts of one call in all, the first included. */
      attempts: 3,
      baseDelayMs: 1_000,
      maxDelayMs: 8_000,
    },
  },
} as const satisfies Record<string, CrmRetryLayer>;
