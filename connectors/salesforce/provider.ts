import type { ProviderLimits } from '../../src/crm/connector.js';
import { providerKind } from '../../src/crm/kind.js';
import { SALESFORCE_RETRY_BUDGET } from './retry-budget.js';

/**
 * Salesforce facts the connector depends on, kept as data in one place. Sources: the REST API developer guide
 * (query batches, sObject Collections, Sforce-Limit-Info, error codes), the Bulk API 2.0 guide (the 2,000-record
 * advice), the Metadata API guide (10 components per CRUD call) and jsforce 3.10 (default API version 50.0).
 */

/** Winter '27's version (jsforce would use 50.0); everything here is written against it unless `salesforce.apiVersion` says otherwise. */
export const DEFAULT_API_VERSION = '68.0';

/** Where OAuth starts unless SALESFORCE_LOGIN_URL names a sandbox or My Domain. */
export const DEFAULT_LOGIN_URL = 'https://login.salesforce.com';
/** Account on Change Data Capture's standard channel (Metadata API `PlatformEventChannelMember`). */
export const CHANGE_EVENT_MEMBER = {
  fullName: 'ChangeEvents_AccountChangeEvent',
  eventChannel: 'ChangeEvents',
  selectedEntity: 'AccountChangeEvent',
} as const;

/** Where Salesforce serves the Pub/Sub API (gRPC over TLS; Pub/Sub API guide, and forcedotcom/pub-sub-api). */
export const PUBSUB_ENDPOINT = 'api.pubsub.salesforce.com:7443';

export const SALESFORCE_PROVIDER = 'salesforce';
/** The same name as the application's CRM kind (installations, connectors). */
export const SALESFORCE_KIND = providerKind(SALESFORCE_PROVIDER);

/** The sObject the connector writes. */
export const ACCOUNT_SOBJECT = 'Account';

/**
 * Account's field that marks a Person Account (an individual, not a company); it exists only in orgs with
 * Person Accounts enabled. Such records are never matched against company reports.
 */
export const PERSON_ACCOUNT_FIELD = 'IsPersonAccount';

export const SALESFORCE_LIMITS: ProviderLimits = {
  /** A SOQL query answers at most 2,000 rows per batch; the rest follow through `nextRecordsUrl`. */
  pageSize: 2000,
  /** Ids per `WHERE Id IN (...)` query: 200 18-character ids keep the statement near 4 KB, far under the 100,000-character SOQL limit. */
  readBatchSize: 200,
  /** sObject Collections accept at most 200 records per call. */
  writeBatchSize: 200,
  /**
   * Salesforce has no short-window rate limit, only a rolling 24-hour allocation (tracked separately) and
   * 25 concurrent long-running requests per org. This pacing keeps one installation from flooding the org.
   */
  requestsPerWindow: 20,
  windowMs: 1000,
  /**
   * Number fields keep 6 decimals (Number(18, 6)) and DateTime keeps whole seconds, so a report time with
   * milliseconds would otherwise never read back equal and every sync would rewrite it.
   */
  valueGrain: { decimals: 6, instantMs: 1000 },
};

/** Salesforce advises Bulk API 2.0 over sObject Collections from this many records on. */
export const BULK_THRESHOLD = 2000;

/** Metadata API create/update/upsert/read calls take at most 10 components each. */
export const METADATA_BATCH_SIZE = 10;

export const OAUTH_SCOPES = ['api', 'refresh_token'] as const;

export const OAUTH_PATHS = {
  authorize: '/services/oauth2/authorize',
  token: '/services/oauth2/token',
  userinfo: '/services/oauth2/userinfo',
} as const;

export const HEADERS = {
  /** `api-usage=used/limit`, on every API response. */
  limitInfo: 'sforce-limit-info',
} as const;

/**
 * The client id every call names (`Sforce-Call-Options: client=...` on REST and Bulk API 2.0, the `CallOptions`
 * SOAP header on the Metadata API). Salesforce writes it into a change event's `changeOrigin`
 * (`com/salesforce/api/rest/68.0;client=report-connector`), which is how the change stream knows the
 * connector's own writes. Fixed, not per deployment: a write made by one release is recognised by the next.
 */
export const CALL_OPTIONS_CLIENT = 'report-connector';

/** The permission set that grants the integration user read and edit on the connector's fields. */
export const PERMISSION_SET = {
  name: 'Report_Connector',
  label: 'Report Connector',
  description: 'Read and edit access to the Account fields written by the report connector.',
} as const;

/**
 * The External Client App the SFDX project declares (Salesforce blocks creating connected apps since Spring
 * '26, Metadata API included; help article 005228017). Metadata types ExternalClientApplication,
 * ExtlClntAppOauthSettings and ExtlClntAppGlobalOauthSettings (API 59.0+).
 */
export const EXTERNAL_CLIENT_APP = {
  name: 'Report_Connector',
  /** fullName of the OAuth plugin settings and of the global OAuth settings. */
  oauthSettingsName: 'Report_Connector_OAuth',
  globalOauthSettingsName: 'Report_Connector_Global_OAuth',
  label: 'Report Connector',
  description: 'Links Accounts to published reports and writes their scores.',
  contactEmail: 'connector-admin@example.com',
  /**
   * `Packaged`: the app ships in a second-generation managed package that every customer org installs, so one
   * consumer key serves them all (a `Local` app works only in the org that created it).
   */
  distributionState: 'Packaged',
  /** fullName of the OAuth policies (what an admin of an org using the app may tighten). */
  oauthPoliciesName: 'Report_Connector_OAuth_Policies',
  /** OAuth scope names as the metadata writes them (the OAuth scope strings are `api refresh_token`). */
  scopes: ['Api', 'RefreshToken'],
} as const;

/**
 * The OAuth policies the app ships with (ExtlClntAppOauthConfigurablePolicies), as Salesforce asks of apps used
 * by customer orgs: refresh tokens expiring after 30 days unused (every poll refreshes long before), the org's
 * IP restrictions enforced, and any user of the org allowed to authorise it (the installing admin; orgs may
 * narrow this to a permission set). Refresh token rotation is not a policy: the Metadata API keeps it in the
 * global OAuth settings (GLOBAL_OAUTH_SETTINGS).
 */
export const OAUTH_POLICIES = {
  refreshTokenPolicyType: 'SpecificInactivity',
  refreshTokenValidityPeriod: 30,
  refreshTokenValidityUnit: 'Days',
  ipRelaxationPolicyType: 'Enforce',
  permittedUsersPolicyType: 'AllSelfAuthorized',
} as const;

/**
 * The app's global OAuth settings (ExtlClntAppGlobalOauthSettings, the owning org's only): PKCE required, and
 * refresh token rotation on (the TokenManager keeps the newest refresh token; its lock stops two processes from
 * spending one). Global settings hold for every org using the app, a package's subscribers included.
 */
export const GLOBAL_OAUTH_SETTINGS = {
  pkceRequired: true,
  refreshTokenRotation: true,
} as const;

/**
 * The SFDX project's directories: `app` is the managed package (the External Client App and its OAuth
 * settings, the developer's part), `app-owner` what the org owning the app deploys beside it and never packages:
 * the global OAuth settings (consumer credentials stay in the source org) and that org's own OAuth policies
 * (policies are each installing org admin's), `unpackaged` the Account fields, the permission sets and the record
 * component, deployed as they are (or created by the connector at install), so CONTRACT's field names
 * (`Report_Score__c`, ...) never carry a namespace prefix.
 */
export const SFDX_DIRECTORIES = {
  app: 'app',
  owner: 'app-owner',
  unpackaged: 'unpackaged',
} as const;

/** The package the `app` directory becomes (`sf package create --name`). */
export const PACKAGE_NAME = 'Report Connector';

/** `errorCode` / `statusCode` values the connector branches on. */
export const ERROR_CODES = {
  invalidSession: 'INVALID_SESSION_ID',
  requestLimitExceeded: 'REQUEST_LIMIT_EXCEEDED',
  unableToLockRow: 'UNABLE_TO_LOCK_ROW',
  entityIsDeleted: 'ENTITY_IS_DELETED',
  invalidCrossReferenceKey: 'INVALID_CROSS_REFERENCE_KEY',
  invalidIdField: 'INVALID_ID_FIELD',
  malformedId: 'MALFORMED_ID',
  invalidFieldForInsertUpdate: 'INVALID_FIELD_FOR_INSERT_UPDATE',
  invalidField: 'INVALID_FIELD',
  invalidType: 'INVALID_TYPE',
  insufficientAccess: 'INSUFFICIENT_ACCESS',
  insufficientAccessOrReadonly: 'INSUFFICIENT_ACCESS_OR_READONLY',
  apiDisabledForOrg: 'API_DISABLED_FOR_ORG',
  invalidQueryLocator: 'INVALID_QUERY_LOCATOR',
  duplicateValue: 'DUPLICATE_VALUE',
  malformedQuery: 'MALFORMED_QUERY',
} as const;

/** Per-record codes that mean the value was refused (a person or the data must change, not the connector). */
export const INVALID_VALUE_CODES: ReadonlySet<string> = new Set([
  'STRING_TOO_LONG',
  'INVALID_TYPE_ON_FIELD_IN_RECORD',
  'NUMBER_OUTSIDE_VALID_RANGE',
  'FIELD_INTEGRITY_EXCEPTION',
  'FIELD_CUSTOM_VALIDATION_EXCEPTION',
  'INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST',
  'REQUIRED_FIELD_MISSING',
  'INVALID_EMAIL_ADDRESS',
  'JSON_PARSER_ERROR',
]);

/** Per-record codes that mean the record is gone (deleted, merged away, or an id that never existed). */
export const RECORD_GONE_CODES: ReadonlySet<string> = new Set([
  ERROR_CODES.entityIsDeleted,
  ERROR_CODES.invalidCrossReferenceKey,
  ERROR_CODES.invalidIdField,
  ERROR_CODES.malformedId,
]);

/** Standard Account fields matching needs, beside the connector's own. */
export const ACCOUNT_STANDARD_FIELDS = [
  'Id',
  'Name',
  'Website',
  'Industry',
  'BillingCountry',
  'BillingCity',
  // The fallback when Billing is empty: many orgs fill only the Shipping address.
  'ShippingCountry',
  'ShippingCity',
] as const;

/**
 * Extra fields a change poll reads. The poll runs through queryAll, so deleted Accounts (recycle bin) come back
 * too, with `IsDeleted` and, for the losers of a merge, `MasterRecordId` naming the survivor.
 */
export const ACCOUNT_CHANGE_FIELDS = [
  'CreatedDate',
  'SystemModstamp',
  'IsDeleted',
  'MasterRecordId',
  // Who changed the record: a person's slug change names its user in the decision log.
  'LastModifiedById',
] as const;

/** Bulk API 2.0 CSV: this cell value sets a field to null (an empty cell leaves it unchanged). */
export const BULK_NULL_VALUE = '#N/A';

export const BULK_DEFAULTS = {
  pollIntervalMs: 2_000,
  /** jsforce's own default is 30 s; a 10,000-record job can take minutes. */
  pollTimeoutMs: 15 * 60_000,
} as const;

/** jsforce waits 30 minutes for an answer by default; a REST call that takes this long has failed. */
export const REQUEST_TIMEOUT_MS = 120_000;

export const CHANGE_POLL = {
  /**
   * SystemModstamp has whole seconds. A poll only hands out records from seconds that are over (by the
   * server's clock, from the response's Date header) and this much older, so nothing can still join a second
   * the cursor has passed: late writes inside the current second, or a transaction committing a moment late.
   */
  settleMs: 1_000,
  /** Most records one poll returns; the cursor continues from the last. */
  maxChangesPerPoll: 10_000,
  /**
   * `sobjects/Account/deleted` ignores seconds, so it is asked at most once per this much time: one call per
   * poll at the default 120 s polling, none between minute marks at faster polling.
   */
  deletedLogEveryMs: 60_000,
} as const;

/** The delete log (`GET sobjects/<type>/deleted/?start=&end=`, API 29.0+); Salesforce keeps about 15 days. */
export const DELETED_LOG_PATH = `/sobjects/${ACCOUNT_SOBJECT}/deleted/`;

/**
 * The delete log's rules (REST "sObject Get Deleted" and SOAP getDeleted()): results for no more than 15 days
 * before the day of the call (less after a recycle-bin purge), an older start refused with
 * INVALID_REPLICATION_DATE; the seconds of start and end ignored, and start must precede end by more than one
 * minute: once the seconds are dropped, by two whole minutes at least (one minute exactly is not more than one).
 * More than 600,000 ids in the span answers EXCEEDED_ID_LIMIT; Salesforce's remedy is a narrower span.
 */
export const DELETE_LOG = {
  retentionMs: 15 * 86_400_000,
  /** Kept off the window's edge: our horizon and Salesforce's clock may fall in different minutes. */
  edgeMarginMs: 10 * 60_000,
  minSpanMs: 2 * 60_000,
  replicationDateError: 'INVALID_REPLICATION_DATE',
  idLimitError: 'EXCEEDED_ID_LIMIT',
  /** Halvings of a span whose ids exceed the limit, within one poll, before falling back to a full listing. */
  maxNarrowings: 6,
} as const;

/** How the daily allocation is watched: re-check a paused org this often. */
export const USAGE_RECHECK_MS = 5 * 60_000;

/**
 * Whole-call retries for REQUEST_LIMIT_EXCEEDED and UNABLE_TO_LOCK_ROW before giving up to the job queue
 * (the counts are the retry budget's, ./retry-budget.ts).
 */
export const RETRY_DEFAULTS = {
  ...SALESFORCE_RETRY_BUDGET.http.budget,
  /** What the queue is told to wait after the retries here are spent on REQUEST_LIMIT_EXCEEDED. */
  rateLimitedRetryAfterMs: 60_000,
  /** ... and when the daily allocation itself is spent. */
  dailyLimitRetryAfterMs: 15 * 60_000,
} as const;
