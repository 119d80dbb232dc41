/**
 * One class per row of the service's error table, plus the failures that happen before or after a status:
 * network trouble, an answer whose shape we cannot read, and GraphQL errors in a 200 body. Every error
 * carries what a caller needs to decide: `retryable`, `status`, `requestId`, `retryAfterMs`, and the error
 * body as sent (parsed JSON when it was JSON, text otherwise).
 */

export type ReportErrorCode =
  | 'REPORTS_BAD_REQUEST'
  | 'REPORTS_UNAUTHORIZED'
  | 'REPORTS_FORBIDDEN'
  | 'REPORTS_WRITE_SCOPE_MISSING'
  | 'REPORTS_NOT_FOUND'
  | 'REPORTS_RATE_LIMITED'
  | 'REPORTS_SERVER_ERROR'
  | 'REPORTS_UNEXPECTED_STATUS'
  | 'REPORTS_NETWORK'
  | 'REPORTS_BAD_RESPONSE'
  | 'REPORTS_GRAPHQL'
  | 'REPORTS_INVALID_REQUEST';

export interface ReportErrorDetails {
  endpoint: string;
  status?: number;
  requestId?: string;
  body?: unknown;
  cause?: unknown;
}

export abstract class ReportServiceError extends Error {
  abstract readonly code: ReportErrorCode;
  abstract readonly retryable: boolean;
  readonly endpoint: string;
  readonly status: number | undefined;
  readonly requestId: string | undefined;
  readonly body: unknown;

  constructor(message: string, details: ReportErrorDetails) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    this.endpoint = details.endpoint;
    this.status = details.status;
    this.requestId = details.requestId;
    this.body = details.body;
  }
}

/** 400: `q` breaks the character or length rule, or another parameter was refused. */
export class ReportBadRequestError extends ReportServiceError {
  readonly code = 'REPORTS_BAD_REQUEST';
  readonly retryable = false;
}

/** 401: the key is missing, invalid or revoked. A person must enter a new key. */
export class ReportUnauthorizedError extends ReportServiceError {
  readonly code = 'REPORTS_UNAUTHORIZED';
  readonly retryable = false;
}

/** 403: the key lacks the scope the endpoint needs. */
export class ReportForbiddenError extends ReportServiceError {
  readonly code = 'REPORTS_FORBIDDEN';
  readonly retryable = false;
}

/** What a person must do when a write is refused for want of the `write` scope. */
export const WRITE_SCOPE_ADVICE =
  "create a key with the `write` scope in the report service's account settings (API keys section) and enter it for this installation";

/**
 * 403 from a write endpoint: the key has no `write` scope (a read-only key, or a legacy key, which is
 * read-only). Its own class so callers can show the advice instead of a generic "forbidden".
 */
export class ReportWriteScopeError extends ReportServiceError {
  readonly code = 'REPORTS_WRITE_SCOPE_MISSING';
  readonly retryable = false;
  readonly missingScope = 'write';
}

/** 404: the slug does not exist or is not published. */
export class ReportNotFoundError extends ReportServiceError {
  readonly code = 'REPORTS_NOT_FOUND';
  readonly retryable = false;
}

/** 429: this key's rate limit is spent. `retryAfterMs` comes from `Retry-After` when the service sent one. */
export class ReportRateLimitedError extends ReportServiceError {
  readonly code = 'REPORTS_RATE_LIMITED';
  readonly retryable = true;
  constructor(
    message: string,
    details: ReportErrorDetails,
    readonly retryAfterMs: number | undefined,
  ) {
    super(message, details);
  }
}

/** 5xx: the service says these are safe to retry. */
export class ReportServerError extends ReportServiceError {
  readonly code = 'REPORTS_SERVER_ERROR';
  readonly retryable = true;
}

/** A status the interface does not list (3xx, 409, ...). */
export class ReportUnexpectedStatusError extends ReportServiceError {
  readonly code = 'REPORTS_UNEXPECTED_STATUS';
  readonly retryable = false;
}

/** No answer: connection refused or reset, DNS, or the per-request timeout. */
export class ReportNetworkError extends ReportServiceError {
  readonly code = 'REPORTS_NETWORK';
  readonly retryable = true;
  constructor(
    message: string,
    details: ReportErrorDetails,
    readonly timedOut: boolean,
  ) {
    super(message, details);
  }
}

/** A 2xx whose body is not what the interface promises. `issues` says where. */
export class ReportResponseError extends ReportServiceError {
  readonly code = 'REPORTS_BAD_RESPONSE';
  readonly retryable = false;
  constructor(
    message: string,
    details: ReportErrorDetails,
    readonly issues: string[],
  ) {
    super(message, details);
  }
}

/** A GraphQL answer with an `errors` array. */
export class ReportGraphQLError extends ReportServiceError {
  readonly code = 'REPORTS_GRAPHQL';
  readonly retryable = false;
  constructor(
    message: string,
    details: ReportErrorDetails,
    readonly messages: string[],
  ) {
    super(message, details);
  }
}

/** The caller asked for something the interface forbids; nothing was sent. */
export class ReportInvalidRequestError extends ReportServiceError {
  readonly code = 'REPORTS_INVALID_REQUEST';
  readonly retryable = false;
}
