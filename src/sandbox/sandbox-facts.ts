/**
 * Everything the sandbox promises about itself, in one place: the documented interface's limits, the keys the
 * CONTRACT lists, and the headers it answers with. Routes and tests read these instead of repeating literals.
 */

export const API_PREFIX = '/api';
export const CONTROL_PREFIX = '/__sandbox';

export const QUERY_MAX_LENGTH = 120;
export const SEARCH_LIMIT_DEFAULT = 20;
export const SEARCH_LIMIT_MAX = 50;

export const DEFAULT_PORT = 4010;
export const DEFAULT_RATE_LIMIT_PER_MINUTE = 600;
export const RATE_LIMIT_WINDOW_MS = 60_000;

/** The largest document upload the sandbox takes; above it, 413. */
export const MAX_DOCUMENT_BYTES = 10 * 1024 * 1024;

export const REQUEST_ID_HEADER = 'x-request-id';
export const RETRY_AFTER_HEADER = 'retry-after';

export const WEBHOOK_HEADERS = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
} as const;

/** A real sender retries a failed delivery a few times with growing pauses; these are the pauses. */
export const DEFAULT_WEBHOOK_RETRY_DELAYS_MS = [1_000, 5_000, 25_000];
export const WEBHOOK_ATTEMPT_TIMEOUT_MS = 10_000;

export const SCOPES = ['read', 'write'] as const;
export type Scope = (typeof SCOPES)[number];

export interface BuiltInKey {
  key: string;
  scopes: Scope[];
  revoked: boolean;
}

export const BUILT_IN_KEYS: readonly BuiltInKey[] = [
  { key: 'sk_sandbox_read', scopes: ['read'], revoked: false },
  { key: 'sk_sandbox_write', scopes: ['read', 'write'], revoked: false },
  // Created before scopes were selectable: such keys have `read` only.
  { key: 'sk_sandbox_legacy', scopes: ['read'], revoked: false },
  { key: 'sk_sandbox_revoked', scopes: ['read', 'write'], revoked: true },
];

/** Route labels, used for request counting; tests filter counts by these. */
export const ROUTES = {
  report: 'GET /v1/reports/:slug',
  search: 'GET /v1/search',
  graphql: 'POST /v1/graphql',
  submissions: 'POST /v1/submissions',
  documents: 'POST /v1/submissions/:id/documents',
} as const;
export type RouteLabel = (typeof ROUTES)[keyof typeof ROUTES];
