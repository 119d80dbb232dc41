/**
 * Errors a CRM connector throws for a whole call. Per-record failures are not thrown: they come back in
 * `WriteResult`. Each class has a stable string `code` the pipeline branches on.
 */

export type CrmErrorCode =
  | 'CRM_RATE_LIMITED'
  | 'CRM_UNAUTHORIZED'
  | 'CRM_DISCONNECTED'
  | 'CRM_FORBIDDEN'
  | 'CRM_QUOTA_PAUSED'
  | 'CRM_TRANSIENT'
  | 'CRM_BAD_REQUEST'
  | 'CRM_FIELDS_MISSING'
  | 'CRM_REVOCATION_FAILED';

export abstract class CrmError extends Error {
  abstract readonly code: CrmErrorCode;
  /** Whether the same call may succeed later without a person doing anything. */
  abstract readonly retryable: boolean;
  constructor(
    message: string,
    readonly provider: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The CRM answered 429 (or its equivalent). Wait `retryAfterMs` before calling this installation again. */
export class CrmRateLimitedError extends CrmError {
  readonly code = 'CRM_RATE_LIMITED';
  readonly retryable = true;
  constructor(
    message: string,
    provider: string,
    readonly retryAfterMs: number,
    readonly policy?: string,
    status = 429,
  ) {
    super(message, provider, status);
  }
}

/** The access token was refused even after one refresh. */
export class CrmUnauthorizedError extends CrmError {
  readonly code = 'CRM_UNAUTHORIZED';
  readonly retryable = false;
}

/** The refresh token was refused (app uninstalled or access revoked): the installation is disconnected. */
export class CrmDisconnectedError extends CrmError {
  readonly code = 'CRM_DISCONNECTED';
  readonly retryable = false;
}

/** A scope or permission is missing; a person must grant it. */
export class CrmForbiddenError extends CrmError {
  readonly code = 'CRM_FORBIDDEN';
  readonly retryable = false;
}

/** The org's daily API allocation passed the configured share: non-urgent work waits. */
export class CrmQuotaPausedError extends CrmError {
  readonly code = 'CRM_QUOTA_PAUSED';
  readonly retryable = true;
  constructor(
    message: string,
    provider: string,
    readonly retryAfterMs: number,
  ) {
    super(message, provider);
  }
}

/** 5xx, lock contention, network trouble: retry with backoff. */
export class CrmTransientError extends CrmError {
  readonly code = 'CRM_TRANSIENT';
  readonly retryable = true;
}

export class CrmBadRequestError extends CrmError {
  readonly code = 'CRM_BAD_REQUEST';
  readonly retryable = false;
}

/** One of the connector's fields is missing or not writable by the integration user. */
export class CrmFieldsMissingError extends CrmError {
  readonly code = 'CRM_FIELDS_MISSING';
  readonly retryable = false;
  constructor(
    message: string,
    provider: string,
    readonly fields: string[],
  ) {
    super(message, provider);
  }
}

/**
 * Removing an installation could not end the app's authorisation in the CRM (unreachable, or it refused). The
 * installation is removed here all the same; `whatToDo` tells a person how to finish in the CRM.
 */
export class CrmRevocationError extends CrmError {
  readonly code = 'CRM_REVOCATION_FAILED';
  readonly retryable = false;
  constructor(
    message: string,
    provider: string,
    readonly whatToDo: string,
    status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, provider, status, options);
  }
}
