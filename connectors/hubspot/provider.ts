import type { ProviderLimits } from '../../src/crm/connector.js';
import { providerKind } from '../../src/crm/kind.js';

/**
 * Facts about HubSpot's API, kept as data in one place: paths, sizes, limits, header and policy names. The
 * connector, the OAuth routes, the webhook receiver, the manifests and the local stand-in all read them from
 * here, so a fact changes in one line. Source: HubSpot's developer docs.
 */

export const HUBSPOT_PROVIDER = 'hubspot';
/** The same name as the application's CRM kind (installations, connectors). */
export const HUBSPOT_KIND = providerKind(HUBSPOT_PROVIDER);

/**
 * Account details' `accountType`: `STANDARD` is a production account (HubSpot's docs). Developer test accounts
 * and sandboxes carry other values; the names are matched loosely (`…TEST…`, `…SANDBOX…`) because only
 * `STANDARD` was confirmed in the docs, and anything else unknown counts as production (fail safe).
 */
export function isHubSpotTestAccount(accountType: string | undefined): boolean {
  return accountType !== undefined && /TEST|SANDBOX/i.test(accountType);
}

export const HUBSPOT_DEFAULT_API_URL = 'https://api.hubapi.com';
export const HUBSPOT_DEFAULT_AUTHORIZE_URL = 'https://app.hubspot.com/oauth/authorize';

/**
 * HubSpot's REST APIs carry a date version in every path since 2026-03 (`/crm/objects/2026-03/companies`); the
 * numbered v1-v4 paths stop being supported in September 2027. 2026-09 applies a portal's validation rules
 * (required properties among them) to every write, which the batch update reports per record (see
 * connector's `updateBatch`), so it is the default. `HUBSPOT_API_VERSION` picks another supported version.
 */
export const HUBSPOT_API_VERSIONS = ['2026-03', '2026-09'] as const;
export type HubSpotApiVersion = (typeof HUBSPOT_API_VERSIONS)[number];
export const HUBSPOT_DEFAULT_API_VERSION: HubSpotApiVersion = '2026-09';

/** Every path the connector calls on HubSpot, built from one date version. */
export function hubspotPaths(version: HubSpotApiVersion) {
  const objects = `/crm/objects/${version}/companies`;
  const properties = `/crm/properties/${version}/companies`;
  return {
    /** Every parameter goes in a form-encoded body, never in the query string. */
    token: `/oauth/${version}/token`,
    /** Client id, secret and token in a form-encoded body. */
    introspect: `/oauth/${version}/token/introspect`,
    /** Revokes a refresh token: client id, secret and token in a form-encoded body. */
    tokenRevoke: `/oauth/${version}/token/revoke`,
    /** Uninstalls the app from the portal of the bearer access token (DELETE, 204). */
    externalInstall: `/appinstalls/${version}/external-install`,
    accountDetails: `/account-info/${version}/details`,
    companies: objects,
    companiesBatchRead: `${objects}/batch/read`,
    companiesBatchUpdate: `${objects}/batch/update`,
    companiesSearch: `${objects}/search`,
    companyProperties: properties,
    companyPropertyGroups: `${properties}/groups`,
    /** Notes (alert activities), created with their association to the company. */
    notes: `/crm/objects/${version}/notes`,
    /** The portal's note -> company association types (v4 labels): the note's association type is read here. */
    noteCompanyLabels: `/crm/associations/${version}/notes/companies/labels`,
  } as const;
}
export type HubSpotPaths = ReturnType<typeof hubspotPaths>;

/**
 * Optional: only an installation that switches alert activities on grants it (HubSpot's notes API lists
 * `crm.objects.contacts.read` / `.write` as its scopes).
 */
export const HUBSPOT_NOTE_SCOPES = ['crm.objects.contacts.write'] as const;

/**
 * Alert activities are off by default. The note scope is asked for only when an admin switches them on and
 * installs the app again through `/oauth/hubspot/install?alert_notes=1` (this query parameter).
 */
export const ALERT_NOTES_INSTALL_PARAM = 'alert_notes';

/** Requested at install; new-platform apps always list `oauth`. */
export const HUBSPOT_SCOPES = [
  'oauth',
  'crm.objects.companies.read',
  'crm.objects.companies.write',
  // Creating and updating the connector's properties; reading them takes crm.objects.companies.read alone.
  'crm.schemas.companies.write',
] as const;

/** Company properties read for matching, besides the connector's own. */
export const HUBSPOT_MATCHING_PROPERTIES = ['name', 'domain', 'industry', 'country', 'city'] as const;

/** HubSpot lists the ids merged into a record in this property (semicolon separated). */
export const HUBSPOT_MERGED_IDS_PROPERTY = 'hs_merged_object_ids';

/** Raw object type id of companies in generic (`object.*`) webhook events. */
export const HUBSPOT_COMPANY_OBJECT_TYPE_ID = '0-2';

/** Company properties whose changes the webhooks journal keeps: the ones the webhooks subscribe to. */
export const HUBSPOT_JOURNAL_PROPERTIES = ['name', 'domain', 'report_slug'] as const;

export const HUBSPOT_SIZES = {
  /** `limit` of the list endpoint. */
  pageSize: 100,
  batchRead: 100,
  batchUpdate: 100,
  /** `limit` of the search endpoint. */
  searchPageSize: 200,
  /** The search endpoint stops paging after this many results. */
  searchMaxResults: 10_000,
} as const;

export const HUBSPOT_RATE_LIMITS = {
  /** Public apps: 110 requests per 10 s per installed portal (search excluded). */
  publishedPerWindow: 110,
  windowMs: 10_000,
  /** Search: 5 requests per second per portal. */
  searchPerSecond: 5,
} as const;

/**
 * What the shared Redis gate paces to. 100 of the published 110 leaves room for the token refresh and for a
 * second process whose gate state lags a little, so the upstream's 429 stays the exception.
 */
export const HUBSPOT_LIMITS: ProviderLimits = {
  pageSize: HUBSPOT_SIZES.pageSize,
  readBatchSize: HUBSPOT_SIZES.batchRead,
  writeBatchSize: HUBSPOT_SIZES.batchUpdate,
  requestsPerWindow: 100,
  windowMs: HUBSPOT_RATE_LIMITS.windowMs,
  /**
   * HubSpot keeps numbers and epoch-millisecond times as sent, so any grain reads back equal; 6 decimals and
   * whole seconds make a change below them no write, as on every CRM the connector speaks to.
   */
  valueGrain: { decimals: 6, instantMs: 1000 },
};

/** Response headers, lower case (fetch's Headers is case-insensitive; Node's raw headers are lower case). */
export const HUBSPOT_RATE_HEADERS = {
  max: 'x-hubspot-ratelimit-max',
  remaining: 'x-hubspot-ratelimit-remaining',
  intervalMs: 'x-hubspot-ratelimit-interval-milliseconds',
  /** Only private-app tokens get the daily pair. */
  daily: 'x-hubspot-ratelimit-daily',
  dailyRemaining: 'x-hubspot-ratelimit-daily-remaining',
  retryAfter: 'retry-after',
} as const;

/** `policyName` in a 429 body. */
export const HUBSPOT_RATE_POLICIES = {
  tenSecondly: 'TEN_SECONDLY_ROLLING',
  secondly: 'SECONDLY',
  daily: 'DAILY',
} as const;

/** `category` values in HubSpot error bodies that the connector branches on. */
export const HUBSPOT_ERROR_CATEGORIES = {
  objectNotFound: 'OBJECT_NOT_FOUND',
  alreadyExists: 'OBJECT_ALREADY_EXISTS',
  validation: 'VALIDATION_ERROR',
  missingScopes: 'MISSING_SCOPES',
  rateLimit: 'RATE_LIMITS',
} as const;

/** OAuth error markers for a refresh token that is no longer valid. */
export const HUBSPOT_BAD_REFRESH = { error: 'invalid_grant', status: 'BAD_REFRESH_TOKEN' } as const;

export const HUBSPOT_WEBHOOK = {
  signatureHeader: 'x-hubspot-signature-v3',
  timestampHeader: 'x-hubspot-request-timestamp',
  /** Older (or further in the future) than this and the request is refused. */
  maxSkewMs: 5 * 60_000,
  maxEventsPerRequest: 100,
  maxBodySize: '1mb',
  /**
   * Percent-encoded characters HubSpot decodes in the URI before signing (v3), per "Validating requests".
   * Everything else stays as sent.
   */
  decodedInUri: ['%3A', '%2F', '%3F', '%40', '%21', '%24', '%27', '%28', '%29', '%2A', '%2C', '%3B'],
} as const;

/** Access tokens live 30 minutes (`expires_in: 1800`). */
export const HUBSPOT_ACCESS_TOKEN_SECONDS = 1800;

/**
 * HubSpot project platform versions the manifests can be generated for, newest first: the first is the default.
 * 2026.03 stays selectable (`HUBSPOT_PLATFORM_VERSION=2026.03 npm run manifests`) while HubSpot supports it.
 */
export const HUBSPOT_PLATFORM_VERSIONS = ['2026.09', '2026.03'] as const;
export type HubSpotPlatformVersion = (typeof HUBSPOT_PLATFORM_VERSIONS)[number];
export const HUBSPOT_PLATFORM_VERSION: HubSpotPlatformVersion = HUBSPOT_PLATFORM_VERSIONS[0];
