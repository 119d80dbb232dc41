import { randomUUID } from 'node:crypto';
import { HUBSPOT_BAD_REFRESH, HUBSPOT_RATE_POLICIES } from '../provider.js';

/**
 * Error bodies in HubSpot's shapes (as documented and as seen in SDK issues), so the connector is tested
 * against what it will parse in production.
 */

export type ErrorBody = Record<string, unknown>;

export function crmError(category: string, message: string, extra: Record<string, unknown> = {}): ErrorBody {
  return { status: 'error', message, correlationId: randomUUID(), category, ...extra };
}

export function rateLimitBody(policy: string): ErrorBody {
  const which =
    policy === HUBSPOT_RATE_POLICIES.daily
      ? 'daily'
      : policy === HUBSPOT_RATE_POLICIES.secondly
        ? 'secondly'
        : policy.toLowerCase();
  return {
    status: 'error',
    message: `You have reached your ${which} limit.`,
    errorType: 'RATE_LIMIT',
    correlationId: randomUUID(),
    policyName: policy,
  };
}

export function unauthorizedBody(expiredAgoMs?: number): ErrorBody {
  if (expiredAgoMs !== undefined) {
    return crmError(
      'EXPIRED_AUTHENTICATION',
      `The OAuth token used to make this call expired ${Math.max(1, Math.round(expiredAgoMs / 1000))} second(s) ago.`,
    );
  }
  return crmError(
    'INVALID_AUTHENTICATION',
    'Authentication credentials not found. This API supports OAuth 2.0 authentication.',
  );
}

export function missingScopesBody(scopes: readonly string[]): ErrorBody {
  return crmError('MISSING_SCOPES', "This app hasn't been granted all required scopes to make this call.", {
    errors: [
      {
        message: 'One or more of the following scopes are required.',
        context: { requiredGranularScopes: [...scopes] },
      },
    ],
  });
}

/** RFC 6749 fields plus HubSpot's older `status` / `message`, as the v3 endpoints answer. */
export function oauthErrorBody(error: string, status: string, description: string): ErrorBody {
  return { error, error_description: description, status, message: description, correlationId: randomUUID() };
}

export function badRefreshTokenBody(): ErrorBody {
  return oauthErrorBody(
    HUBSPOT_BAD_REFRESH.error,
    HUBSPOT_BAD_REFRESH.status,
    'refresh token is invalid, expired or revoked',
  );
}

export interface InvalidProperty {
  name: string;
  error: string;
  message: string;
}

/** HubSpot puts the per-property problems as JSON inside the message. */
export function invalidPropertiesBody(items: readonly InvalidProperty[]): ErrorBody {
  const detail = items.map((i) => ({ isValid: false, message: i.message, error: i.error, name: i.name }));
  return crmError('VALIDATION_ERROR', `Property values were not valid: ${JSON.stringify(detail)}`);
}

export function notFoundIdsError(ids: readonly string[]): ErrorBody {
  return crmError(
    'OBJECT_NOT_FOUND',
    'Could not get some COMPANY objects, they may be deleted or not exist. Check that ids are valid.',
    { context: { ids: [...ids] } },
  );
}

/**
 * One record refused by a portal's validation rules (API version 2026-09 on), as an entry of a 207's `errors`.
 * The shape follows HubSpot's VALIDATION_ERROR bodies with the record's id in `context.ids`; the exact
 * wording HubSpot uses for 2026-09 is not documented.
 */
export function recordValidationError(id: string, items: readonly InvalidProperty[]): ErrorBody {
  return { ...invalidPropertiesBody(items), context: { ids: [id] } };
}

/** What HubSpot answers on a path that does not exist. */
export function notFoundPathBody(path: string): ErrorBody {
  return crmError('OBJECT_NOT_FOUND', `No route for ${path}`);
}
