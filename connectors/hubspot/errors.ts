import type { FieldKey } from '../../src/fields.js';

/**
 * Errors specific to the HubSpot side. Whole-call CRM failures use the shared classes of src/crm/errors.ts;
 * these cover what only HubSpot code raises: the OAuth token endpoint, webhook signatures and payloads, and
 * values that cannot be put on the wire.
 */

/** The token or introspection endpoint refused or could not be reached. */
export class HubSpotOAuthError extends Error {
  readonly code = 'HUBSPOT_OAUTH_FAILED';
  constructor(
    message: string,
    /** HTTP status, or undefined when HubSpot could not be reached. */
    readonly status: number | undefined,
    /** `error` of the body (RFC 6749: `invalid_grant`, `invalid_client`, ...). */
    readonly providerError?: string,
    /** HubSpot's own `status` field (`BAD_REFRESH_TOKEN`, `BAD_AUTH_CODE`, ...). */
    readonly providerStatus?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'HubSpotOAuthError';
  }

  /** HubSpot answered with a 4xx: retrying the same request will not help. */
  get refused(): boolean {
    return this.status !== undefined && this.status >= 400 && this.status < 500;
  }
}

export type HubSpotSignatureFailure =
  | 'missing_signature'
  | 'missing_timestamp'
  | 'malformed_timestamp'
  | 'timestamp_too_old'
  | 'timestamp_in_future'
  | 'signature_mismatch';

/** A webhook request whose v3 signature does not verify. Answer 401. */
export class HubSpotSignatureError extends Error {
  readonly code = 'HUBSPOT_SIGNATURE_INVALID';
  constructor(
    readonly reason: HubSpotSignatureFailure,
    message: string,
  ) {
    super(message);
    this.name = 'HubSpotSignatureError';
  }
}

export type HubSpotPayloadFailure = 'malformed_json' | 'not_an_event_list' | 'too_many_events';

/** A signed webhook body that is not a list of at most 100 events. Answer 400. */
export class HubSpotPayloadError extends Error {
  readonly code = 'HUBSPOT_PAYLOAD_INVALID';
  constructor(
    readonly reason: HubSpotPayloadFailure,
    message: string,
  ) {
    super(message);
    this.name = 'HubSpotPayloadError';
  }
}

/** A value the connector was asked to write cannot be expressed in the property's HubSpot type. */
export class ValueConversionError extends Error {
  readonly code = 'VALUE_NOT_CONVERTIBLE';
  constructor(
    readonly field: FieldKey,
    message: string,
  ) {
    super(message);
    this.name = 'ValueConversionError';
  }
}
