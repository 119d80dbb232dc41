import type { ProviderLimits } from '../../src/crm/connector.js';

/**
 * Facts about HubSpot's API, kept as data in one place: paths, sizes, limits, header and policy names. The
 * connector, the OAuth routes, the webhook receiver, the manifests and the local stand-in all read them from
 * here, so a fact changes in one line. Source: HubSpot's developer docs.
 */

export const HUBSPOT_PROVIDER = 'hubspot';

export const HUBSPOT_DEFAULT_API_URL = 'https://api.hubapi.com';
export const HUBSPOT_DEFAULT_AUTHORIZE_URL = 'https://app.hubspot.com/oauth/authorize';

export const HUBSPOT_PATHS = {
  /** v3 token endpoint: every parameter goes in a form-encoded body (v1 is deprecated on 2027-02-16). */
  token: '/oauth/v3/token',
  /** v3 introspection: client id, secret and token in a form-encoded body. */
  introspect: '/oauth/v3/token/introspect',
  accountDetails: '/account-info/v3/details',
  companies: '/crm/v3/objects/companies',
  companiesBatchRead: '/crm/v3/objects/companies/batch/read',
  companiesBatchUpdate: '/crm/v3/objects/companies/batch/update',
  companiesSearch: '/crm/v3/objects/companies/search',
  companyProperties: '/crm/v3/properties/companies',
  companyPropertyGroups: '/crm/v3/properties/companies/groups',
} as const;

/** Requested at install; new-platform apps always list `oauth`. */
export const HUBSPOT_SCOPES = [
  'oauth',
  'crm.objects.companies.read',
  'crm.objects.companies.write',
  'crm.schemas.companies.read',
  'crm.schemas.companies.write',
] as const;

/** Company properties read for matching, besides the connector's own. */
export const HUBSPOT_MATCHING_PROPERTIES = ['name', 'domain', 'industry', 'country', 'city'] as const;

/** HubSpot lists the ids merged into a record in this property (semicolon separated). */
export const HUBSPOT_MERGED_IDS_PROPERTY = 'hs_merged_object_ids';

/** Raw object type id of companies in generic (`object.*`) webhook events. */
export const HUBSPOT_COMPANY_OBJECT_TYPE_ID = '0-2';

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

/** HubSpot project platform version for the manifests. */
export const HUBSPOT_PLATFORM_VERSION = '2026.03';
