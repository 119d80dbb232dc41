import type { RecordError } from '../../src/crm/connector.js';
import {
  CrmBadRequestError,
  type CrmError,
  CrmFieldsMissingError,
  CrmForbiddenError,
  CrmTransientError,
} from '../../src/crm/errors.js';
import {
  ERROR_CODES,
  INVALID_VALUE_CODES,
  PERMISSION_SET,
  RECORD_GONE_CODES,
  SALESFORCE_PROVIDER,
} from './provider.js';

/**
 * Turning what jsforce throws into facts (code, message, HTTP status when known), and those facts into the
 * connector's typed errors. jsforce's HttpApiError carries Salesforce's `errorCode` as its name, SOAP faults
 * arrive as `sf:CODE`, token-endpoint errors as the OAuth `error` string, and network failures as undici
 * TypeErrors.
 */

export interface SalesforceFailure {
  code: string;
  message: string;
  /** Only known when Salesforce answered without its JSON error body (`ERROR_HTTP_503`). */
  status?: number;
  fields?: string[];
}

const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ENOTFOUND',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

function prop(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

function stringProp(value: unknown, key: string): string | undefined {
  const v = prop(value, key);
  return typeof v === 'string' ? v : undefined;
}

function isNetworkError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err.name === 'AbortError') return true;
  let cause: unknown = err;
  for (let depth = 0; depth < 4 && cause; depth++) {
    const code = stringProp(cause, 'code');
    if (code && NETWORK_CODES.has(code)) return true;
    cause = prop(cause, 'cause');
  }
  return err instanceof TypeError && /fetch failed|terminated|socket/i.test(err.message);
}

export function describeFailure(err: unknown): SalesforceFailure | null {
  if (isNetworkError(err)) {
    return { code: 'NETWORK', message: err instanceof Error ? err.message : String(err) };
  }
  let code = stringProp(err, 'errorCode');
  let message = err instanceof Error ? err.message : String(err);
  let fields: string[] | undefined;
  const data = prop(err, 'data');
  if (code === 'MULTIPLE_API_ERRORS' && Array.isArray(data) && data.length > 0) {
    code = stringProp(data[0], 'errorCode') ?? code;
    message = stringProp(data[0], 'message') ?? message;
  }
  if (!code) return null;
  const dataFields = prop(data, 'fields');
  if (Array.isArray(dataFields)) fields = dataFields.filter((f): f is string => typeof f === 'string');
  code = code.replace(/^[a-z]+:/, '');
  const http = /^ERROR_HTTP_(\d{3})$/.exec(code);
  return { code, message, ...(http ? { status: Number(http[1]) } : {}), ...(fields ? { fields } : {}) };
}

export function fieldAccessMessage(fields: string[]): string {
  const which = fields.length > 0 ? fields.join(', ') : "the connector's Account fields";
  return (
    `The Salesforce integration user lacks edit access to ${which}. Assign the permission set ` +
    `"${PERMISSION_SET.label}" (${PERMISSION_SET.name}) to that user in Setup > Users > Permission Sets, ` +
    'or grant edit access to these fields in its profile.'
  );
}

/** The typed error for a whole-call failure that is not retried here. */
export function toCrmError(failure: SalesforceFailure, cause: unknown): CrmError {
  const opts = { cause };
  switch (failure.code) {
    case 'NETWORK':
      return new CrmTransientError(
        `Salesforce could not be reached: ${failure.message}`,
        SALESFORCE_PROVIDER,
        undefined,
        opts,
      );
    case ERROR_CODES.invalidField:
      return new CrmFieldsMissingError(
        `Salesforce refused a connector field (${failure.message}). Run the connector setup so the fields exist, ` +
          `and assign the permission set ${PERMISSION_SET.name} to the integration user.`,
        SALESFORCE_PROVIDER,
        failure.fields ?? [],
      );
    case ERROR_CODES.insufficientAccess:
    case ERROR_CODES.insufficientAccessOrReadonly:
    case ERROR_CODES.apiDisabledForOrg:
    case 'FUNCTIONALITY_NOT_ENABLED':
      return new CrmForbiddenError(
        `Salesforce refused the call: ${failure.message}`,
        SALESFORCE_PROVIDER,
        403,
        opts,
      );
  }
  if (failure.status !== undefined && failure.status >= 500) {
    return new CrmTransientError(
      `Salesforce answered ${failure.status}`,
      SALESFORCE_PROVIDER,
      failure.status,
      opts,
    );
  }
  if (failure.code === 'SERVER_UNAVAILABLE' || failure.code === 'UNKNOWN_EXCEPTION') {
    return new CrmTransientError(`Salesforce failed: ${failure.message}`, SALESFORCE_PROVIDER, 503, opts);
  }
  return new CrmBadRequestError(
    `Salesforce refused the call (${failure.code}): ${failure.message}`,
    SALESFORCE_PROVIDER,
    failure.status ?? 400,
    opts,
  );
}

/** One per-record error of sObject Collections or Bulk API 2.0. */
export interface SalesforceRecordFailure {
  statusCode: string;
  message: string;
  fields?: string[];
}

export function toRecordError(errors: readonly SalesforceRecordFailure[]): RecordError {
  const first = errors[0] ?? {
    statusCode: 'UNKNOWN',
    message: 'Salesforce reported a failure without details',
  };
  const providerCode = first.statusCode;
  if (RECORD_GONE_CODES.has(providerCode)) {
    return { code: 'NOT_FOUND', message: `the Account no longer exists (${first.message})`, providerCode };
  }
  if (providerCode === ERROR_CODES.unableToLockRow) {
    return {
      code: 'RETRYABLE',
      message: `the Account was locked by another update: ${first.message}`,
      providerCode,
    };
  }
  if (providerCode === ERROR_CODES.invalidFieldForInsertUpdate || providerCode === ERROR_CODES.invalidField) {
    const fields = errors.flatMap((e) => e.fields ?? []);
    return { code: 'FIELD_NOT_WRITABLE', message: fieldAccessMessage([...new Set(fields)]), providerCode };
  }
  if (INVALID_VALUE_CODES.has(providerCode)) {
    return { code: 'INVALID_VALUE', message: `Salesforce refused a value: ${first.message}`, providerCode };
  }
  if (providerCode === ERROR_CODES.insufficientAccessOrReadonly) {
    return {
      code: 'UNKNOWN',
      message: `the integration user may not edit this Account (record sharing): ${first.message}`,
      providerCode,
    };
  }
  return { code: 'UNKNOWN', message: `${providerCode}: ${first.message}`, providerCode };
}
