import { createHash, randomBytes } from 'node:crypto';
import { seededRandom } from '../../../fixtures/seeded-random.js';
import { isSalesforceId, toId18 } from '../records/ids.js';
import { UI_ORIGIN } from './change-origin.js';
import { IdFactory, KEY_PREFIX } from './ids.js';
import {
  type CellValue,
  type ColumnKind,
  evaluate,
  parseSoql,
  requireColumn,
  type Schema,
  SoqlError,
  sortRows,
} from './soql.js';

/**
 * The state of one local Salesforce org: Accounts, the custom fields and permission sets created through the
 * Metadata API, users, OAuth codes and tokens, the daily API allocation, injected faults and request counters.
 * The HTTP layer (./server.ts) turns requests into calls on this class. A test and demo tool, not a database.
 */

export interface LocalSalesforceOptions {
  /** The org's id (default the first id of its own sequence): tests with several orgs give each its own. */
  orgId?: string;
  clientId?: string;
  clientSecret?: string;
  /** When set, `redirect_uri` must be one of these (a connected app's callback URLs). */
  callbackUrls?: string[];
  /** The connected app's "Require PKCE" (default true). */
  requirePkce?: boolean;
  /**
   * Refresh token rotation (default true): each refresh answers a new refresh token and spends the old one; a
   * spent one presented again revokes its whole chain (the current refresh token and its access tokens).
   */
  rotateRefreshTokens?: boolean;
  /** Rows per query batch; Salesforce's default is 2,000. */
  queryPageSize?: number;
  /** `Organization.IsSandbox`: a sandbox unless a test asks for a production org. */
  isSandbox?: boolean;
  /**
   * State and Country/Territory Picklists (default off): Account then has `BillingCountryCode` and
   * `ShippingCountryCode`; without them, selecting those fields is INVALID_FIELD, as in Salesforce.
   */
  countryPicklists?: boolean;
  /**
   * Person Accounts on (default off): Account then has `IsPersonAccount`, and a seeded Account may be a person;
   * without them, selecting or filtering on that field is INVALID_FIELD, as in Salesforce.
   */
  personAccounts?: boolean;
  /** Account's org-wide default (`Organization.DefaultAccountAccess`); default `Edit` (public read/write). */
  accountSharing?: AccountSharing;
  /** What the integration user's profile grants beyond reading its own Accounts (default nothing more). */
  integrationUserAccess?: IntegrationUserAccess;
  /** The rolling 24-hour API allocation reported in Sforce-Limit-Info. */
  dailyApiLimit?: number;
  /** Access tokens stop working after this long (default: never, until `expireAccessTokens`). */
  accessTokenTtlMs?: number;
  /** Until a permission set grants edit, writes to custom fields answer INVALID_FIELD_FOR_INSERT_UPDATE (default true). */
  fieldLevelSecurity?: boolean;
  /** Whether the integration user may change metadata (default true). */
  canModifyMetadata?: boolean;
  /** How many job checks answer InProgress before a Bulk API 2.0 job completes (default 1). */
  bulkChecksBeforeComplete?: number;
  /** Whether the OpenID userinfo endpoint answers `api`-scoped tokens (default true). */
  userinfoAllowed?: boolean;
  /** Whether Chatter (and with it the Connect API's `users/me`) is on (default true). */
  chatterEnabled?: boolean;
  /** Most ids the delete log answers for in one read; more answers EXCEEDED_ID_LIMIT (Salesforce: 600,000). */
  deletedIdLimit?: number;
  /**
   * Account selected for Change Data Capture on the standard channel from the start (default true), as after an
   * admin deployed the SFDX project; false: the Pub/Sub API publishes no Account change until a selection is made.
   */
  accountChangeEvents?: boolean;
  /** The org's selected entities are at the allocation (five without the add-on): a new selection is refused. */
  changeEventEntityLimitReached?: boolean;
  /** Seed for the injected per-record faults. */
  seed?: number;
  now?: () => number;
}

export type AccountSharing = 'None' | 'Read' | 'Edit';
export type IntegrationUserAccess = 'own' | 'view-all-accounts' | 'view-all-data';

/** The permission set that stands for the integration user's profile (Salesforce gives every profile one). */
const PROFILE_PERMISSION_SET_ID = toId18('0PS5gPROFILE001');
const PROFILE_ASSIGNMENT_ID = toId18('0Pa5gPROFILE001');
const PROFILE_ACCOUNT_PERMISSION_ID = toId18('1105gPROFILE001');

export interface Faults {
  /** Share of records in a write that fail with FIELD_CUSTOM_VALIDATION_EXCEPTION. */
  failShare: number;
  /** Share of records in a write that fail with UNABLE_TO_LOCK_ROW. */
  lockRowShare: number;
  /** The next N API calls answer 403 REQUEST_LIMIT_EXCEEDED. */
  requestLimitExceeded: number;
  /** The next N collection writes fail as a whole with UNABLE_TO_LOCK_ROW. */
  lockRowWholeCall: number;
  /** The next N API calls answer 503. */
  serverErrors: number;
  /** The next N API calls answer 401 INVALID_SESSION_ID whatever the token. */
  sessionExpired: number;
}

const NO_FAULTS: Faults = {
  failShare: 0,
  lockRowShare: 0,
  requestLimitExceeded: 0,
  lockRowWholeCall: 0,
  serverErrors: 0,
  sessionExpired: 0,
};

export type CustomFieldType = 'Text' | 'LongTextArea' | 'Number' | 'DateTime' | 'Url';

export interface CustomFieldDef {
  fullName: string;
  label: string;
  type: CustomFieldType;
  length?: number;
  precision?: number;
  scale?: number;
  visibleLines?: number;
  description?: string;
  inlineHelpText?: string;
}

interface PermissionSetState {
  id: string;
  name: string;
  label: string;
  fieldPermissions: Map<string, { readable: boolean; editable: boolean }>;
  objectPermissions: Map<string, ObjectAccess>;
}

/** A permission set's access to one object, as the Metadata API's `objectPermissions` writes it. */
export interface ObjectAccess {
  allowCreate: boolean;
  allowDelete: boolean;
  allowEdit: boolean;
  allowRead: boolean;
  modifyAllRecords: boolean;
  viewAllRecords: boolean;
}

export interface StoredAccount {
  Id: string;
  Name: string | null;
  Website: string | null;
  Industry: string | null;
  BillingCountry: string | null;
  BillingCity: string | null;
  ShippingCountry: string | null;
  ShippingCity: string | null;
  BillingCountryCode: string | null;
  ShippingCountryCode: string | null;
  CreatedDate: number;
  LastModifiedDate: number;
  SystemModstamp: number;
  CreatedById: string;
  LastModifiedById: string;
  IsDeleted: boolean;
  MasterRecordId: string | null;
  /** A Person Account (only in an org with Person Accounts on). */
  IsPersonAccount: boolean;
  custom: Record<string, CellValue>;
}

export interface SeedAccount {
  Name?: string | null;
  Website?: string | null;
  Industry?: string | null;
  BillingCountry?: string | null;
  BillingCity?: string | null;
  ShippingCountry?: string | null;
  ShippingCity?: string | null;
  /** With country picklists on: the ISO codes beside the names. */
  BillingCountryCode?: string | null;
  ShippingCountryCode?: string | null;
  /** With Person Accounts on: a person rather than a company. */
  IsPersonAccount?: boolean;
  /** Custom field values by API name (`Report_Slug__c`); the field must exist. */
  [customField: string]: string | number | boolean | null | undefined;
}

/** An Account change as Change Data Capture reports it; the local Pub/Sub server listens (pubsub-server.ts). */
export interface LocalAccountChange {
  changeType: 'CREATE' | 'UPDATE' | 'DELETE' | 'UNDELETE';
  ids: string[];
  /** API names of the fields whose values changed (an update), or that hold a value (a create). */
  changed: string[];
  /** The change event's `commitUser`: the user behind the session (or the person, for a UI edit). */
  userId: string;
  /** The change event's `changeOrigin` (change-origin.ts): the API and client of the call, '' for a UI edit. */
  origin: string;
}

export interface RecordFailure {
  statusCode: string;
  message: string;
  fields: string[];
}

export type LocalConsent = 'approve' | 'deny' | 'uninstalled' | 'not_approved';

export class SalesforceApiError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: string,
    message: string,
    readonly fields: string[] = [],
  ) {
    super(message);
    this.name = 'SalesforceApiError';
  }
}

const STANDARD_ACCOUNT_COLUMNS: Record<string, ColumnKind> = {
  Id: 'id',
  Name: 'string',
  Website: 'string',
  Industry: 'string',
  BillingCountry: 'string',
  BillingCity: 'string',
  ShippingCountry: 'string',
  ShippingCity: 'string',
  BillingCountryCode: 'string',
  ShippingCountryCode: 'string',
  CreatedDate: 'datetime',
  LastModifiedDate: 'datetime',
  SystemModstamp: 'datetime',
  CreatedById: 'id',
  LastModifiedById: 'id',
  IsDeleted: 'boolean',
  MasterRecordId: 'id',
  IsPersonAccount: 'boolean',
};
const UPDATEABLE_STANDARD = new Set([
  'Name',
  'Website',
  'Industry',
  'BillingCountry',
  'BillingCity',
  'ShippingCountry',
  'ShippingCity',
  'BillingCountryCode',
  'ShippingCountryCode',
]);
/** Account's columns that exist only with State and Country/Territory Picklists on. */
const PICKLIST_ONLY_COLUMNS = new Set(['BillingCountryCode', 'ShippingCountryCode']);
/** Account's column that exists only with Person Accounts on. */
const PERSON_ACCOUNT_COLUMN = 'IsPersonAccount';
const STANDARD_LENGTH: Record<string, number> = {
  Name: 255,
  Website: 255,
  Industry: 255,
  BillingCountry: 80,
  BillingCity: 40,
  ShippingCountry: 80,
  ShippingCity: 40,
  BillingCountryCode: 10,
  ShippingCountryCode: 10,
};

/** The fields of a new Account that hold a value: a create's changed fields. */
function filledFields(account: StoredAccount): string[] {
  const standard = Object.keys(STANDARD_ACCOUNT_COLUMNS).filter(
    (name) => (account as unknown as Record<string, unknown>)[name] !== null,
  );
  const custom = Object.keys(account.custom).filter((name) => account.custom[name] !== null);
  return [...standard, ...custom];
}

/** How many days back the delete log answers (Salesforce: "no more than 15 days previous"). */
export const DELETE_LOG_DAYS = 15;

/** `2024-05-01T12:00:00.000+0000`, whole seconds: how the REST API writes date-times. */
export function formatDateTime(ms: number): string {
  return `${new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19)}.000+0000`;
}

interface ObjectView {
  schema: Schema;
  rows: (all: boolean) => Record<string, CellValue>[];
  type: string;
}

/** A Task the connector created (alert activities). */
export interface LocalTask {
  Id: string;
  WhatId: string;
  Subject: string;
  Description: string | null;
  ActivityDate: string | null;
  Status: string;
  CreatedById: string;
}

/** A value of Task's Status picklist, as the TaskStatus object shows it. */
export interface LocalTaskStatus {
  Id: string;
  MasterLabel: string;
  ApiName: string;
  IsClosed: boolean;
  IsDefault: boolean;
  SortOrder: number;
}

/** A new org's Task statuses (Salesforce's defaults): one of them closed. */
const DEFAULT_TASK_STATUSES: Omit<LocalTaskStatus, 'Id'>[] = [
  { MasterLabel: 'Not Started', ApiName: 'Not Started', IsClosed: false, IsDefault: true, SortOrder: 1 },
  { MasterLabel: 'In Progress', ApiName: 'In Progress', IsClosed: false, IsDefault: false, SortOrder: 2 },
  { MasterLabel: 'Completed', ApiName: 'Completed', IsClosed: true, IsDefault: false, SortOrder: 3 },
  {
    MasterLabel: 'Waiting on someone else',
    ApiName: 'Waiting on someone else',
    IsClosed: false,
    IsDefault: false,
    SortOrder: 4,
  },
  { MasterLabel: 'Deferred', ApiName: 'Deferred', IsClosed: false, IsDefault: false, SortOrder: 5 },
];

export class LocalOrg {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly orgId: string;
  /** `Organization.IsSandbox` (setIsSandbox on the server). */
  isSandbox: boolean;
  /** State and Country/Territory Picklists on (setCountryPicklists on the server). */
  countryPicklists: boolean;
  /** Account's org-wide default and what the integration user may see beyond it (setAccountVisibility). */
  accountSharing: AccountSharing;
  integrationUserAccess: IntegrationUserAccess;
  readonly integrationUserId: string;
  readonly personUserId: string;
  readonly options: Required<
    Omit<
      LocalSalesforceOptions,
      | 'orgId'
      | 'callbackUrls'
      | 'accessTokenTtlMs'
      | 'now'
      | 'accountChangeEvents'
      | 'changeEventEntityLimitReached'
    >
  > &
    Pick<LocalSalesforceOptions, 'callbackUrls' | 'accessTokenTtlMs'>;
  readonly now: () => number;
  /** Added to the injected clock by `advanceClock` (a test that lets days pass without waiting). */
  private clockOffsetMs = 0;

  private readonly ids = new IdFactory();
  private readonly accounts = new Map<string, StoredAccount>();
  /** Salesforce's delete log, which `sobjects/Account/deleted` reads: id -> when it was deleted. */
  private readonly deleteLog = new Map<string, number>();
  /** Nothing deleted before this moment is in the log any more (the recycle bin was emptied then). */
  private deleteLogPurgedAt = 0;
  private readonly createdAt: number;
  private readonly tasks: LocalTask[] = [];
  /** Task's Status picklist (the TaskStatus object); `renameTaskStatus` changes a value as an admin would. */
  private readonly taskStatuses: LocalTaskStatus[];
  readonly customFields = new Map<string, CustomFieldDef>();
  private readonly permissionSets = new Map<string, PermissionSetState>();
  private readonly assignments: { id: string; assigneeId: string; permissionSetId: string }[] = [];
  private readonly users: { Id: string; Username: string; Name: string }[];

  /** `chain`: the refresh token chain (one per consent) an access token was issued from, if any. */
  private readonly accessTokens = new Map<
    string,
    { userId: string; issuedAt: number; expired: boolean; chain?: string }
  >();
  /** `spent`: replaced under rotation. Every refresh token of one consent shares its `chain`. */
  private readonly refreshTokens = new Map<
    string,
    { userId: string; revoked: boolean; spent: boolean; chain: string }
  >();
  private readonly authCodes = new Map<
    string,
    {
      clientId: string;
      redirectUri: string;
      challenge: string | null;
      userId: string;
      expiresAt: number;
      scope: string;
    }
  >();
  private readonly locators = new Map<string, { rows: Record<string, unknown>[]; version: string }>();

  apiUsed = 0;
  apiLimit: number;
  faults: Faults = { ...NO_FAULTS };
  /**
   * What the authorization page does: approve, the user declines, or one of the refusals Salesforce gives
   * since September 2025 (`uninstalled`: the app is not installed and the user lacks "Approve Uninstalled
   * Connected Apps"; `not_approved`: the app admits admin-approved users only).
   */
  consent: LocalConsent = 'approve';
  private random: () => number;
  private readonly counters = new Map<string, number>();
  readonly versionsSeen = new Set<string>();
  /** Called after each Account change, in order (the local Pub/Sub server's event bus). */
  readonly accountChangeListeners = new Set<(change: LocalAccountChange) => void>();

  constructor(options: LocalSalesforceOptions = {}) {
    // Set first: the delete log starts when the org does.
    this.createdAt = (options.now ?? Date.now)();
    this.options = {
      clientId: options.clientId ?? 'local-client-id',
      clientSecret: options.clientSecret ?? 'local-client-secret',
      requirePkce: options.requirePkce ?? true,
      rotateRefreshTokens: options.rotateRefreshTokens ?? true,
      queryPageSize: options.queryPageSize ?? 2000,
      dailyApiLimit: options.dailyApiLimit ?? 100_000,
      fieldLevelSecurity: options.fieldLevelSecurity ?? true,
      canModifyMetadata: options.canModifyMetadata ?? true,
      bulkChecksBeforeComplete: options.bulkChecksBeforeComplete ?? 1,
      deletedIdLimit: options.deletedIdLimit ?? 600_000,
      seed: options.seed ?? 42,
      userinfoAllowed: options.userinfoAllowed ?? true,
      chatterEnabled: options.chatterEnabled ?? true,
      callbackUrls: options.callbackUrls,
      isSandbox: options.isSandbox ?? true,
      countryPicklists: options.countryPicklists ?? false,
      personAccounts: options.personAccounts ?? false,
      accountSharing: options.accountSharing ?? 'Edit',
      integrationUserAccess: options.integrationUserAccess ?? 'own',
      accessTokenTtlMs: options.accessTokenTtlMs,
    };
    this.clientId = this.options.clientId;
    this.clientSecret = this.options.clientSecret;
    const clock = options.now ?? Date.now;
    this.now = () => clock() + this.clockOffsetMs;
    this.apiLimit = this.options.dailyApiLimit;
    this.random = seededRandom(this.options.seed);
    const ownId = this.ids.next(KEY_PREFIX.organization);
    this.orgId = options.orgId ?? ownId;
    this.isSandbox = this.options.isSandbox;
    this.countryPicklists = this.options.countryPicklists;
    this.accountSharing = this.options.accountSharing;
    this.integrationUserAccess = this.options.integrationUserAccess;
    this.integrationUserId = this.ids.next(KEY_PREFIX.user);
    this.personUserId = this.ids.next(KEY_PREFIX.user);
    // Their own counter: the org's other ids stay what they were without them.
    const statusIds = new IdFactory();
    this.taskStatuses = DEFAULT_TASK_STATUSES.map((s) => ({
      Id: statusIds.next(KEY_PREFIX.taskStatus),
      ...s,
    }));
    this.users = [
      { Id: this.integrationUserId, Username: 'integration@local.salesforce.test', Name: 'Integration User' },
      { Id: this.personUserId, Username: 'person@local.salesforce.test', Name: 'Sales Person' },
    ];
  }

  /** Moves the org's clock (and so its Date header, stamps and delete-log window) forward. */
  advanceClock(ms: number): void {
    this.clockOffsetMs += ms;
  }

  /** Record stamps have whole seconds, as Salesforce's do. */
  stamp(): number {
    return Math.floor(this.now() / 1000) * 1000;
  }

  // ---- counters, usage, faults ----

  count(route: string): void {
    this.counters.set(route, (this.counters.get(route) ?? 0) + 1);
  }

  /** Records per collection write (`composite/sobjects`), in the order they came, since the last reset. */
  readonly collectionSizes: number[] = [];
  /** Faults armed by `injectFaultsAfterCollections`: injected once `collections` more writes have answered. */
  private armed: { collections: number; faults: Partial<Faults> } | null = null;

  injectFaultsAfterCollections(collections: number, faults: Partial<Faults>): void {
    this.armed = { collections, faults };
  }

  /** A collection write answered: counts down to the armed faults. */
  collectionAnswered(): void {
    if (!this.armed) return;
    this.armed.collections -= 1;
    if (this.armed.collections > 0) return;
    const { faults } = this.armed;
    this.armed = null;
    this.injectFaults(faults);
  }

  counts(): Record<string, number> {
    return Object.fromEntries([...this.counters.entries()].sort(([a], [b]) => a.localeCompare(b)));
  }

  resetCounts(): void {
    this.counters.clear();
    this.collectionSizes.length = 0;
  }

  injectFaults(faults: Partial<Faults> & { seed?: number }): void {
    const { seed, ...rest } = faults;
    this.faults = { ...this.faults, ...rest };
    if (seed !== undefined) this.random = seededRandom(seed);
  }

  clearFaults(): void {
    this.faults = { ...NO_FAULTS };
    this.armed = null;
  }

  /** Takes one from a one-shot fault counter; true when the fault fires. */
  takeFault(name: 'requestLimitExceeded' | 'lockRowWholeCall' | 'serverErrors' | 'sessionExpired'): boolean {
    if (this.faults[name] <= 0) return false;
    this.faults[name]--;
    return true;
  }

  setApiUsage(used: number, limit = this.apiLimit): void {
    this.apiUsed = used;
    this.apiLimit = limit;
  }

  limitInfo(): string {
    return `api-usage=${this.apiUsed}/${this.apiLimit}`;
  }

  // ---- OAuth ----

  createAuthCode(input: {
    clientId: string;
    redirectUri: string;
    challenge: string | null;
    scope: string;
  }): string {
    const code = randomBytes(24).toString('base64url');
    this.authCodes.set(code, {
      ...input,
      userId: this.integrationUserId,
      expiresAt: this.now() + 15 * 60_000,
    });
    return code;
  }

  /**
   * Single use: the code is gone after this call whatever the outcome, as Salesforce does. The verifier must be
   * RFC 7636's: 43 to 128 characters of `A-Z a-z 0-9 - . _ ~`.
   */
  redeemAuthCode(
    code: string,
    redirectUri: string,
    verifier: string | undefined,
  ): { userId: string; scope: string } {
    const entry = this.authCodes.get(code);
    this.authCodes.delete(code);
    if (!entry || entry.expiresAt < this.now())
      throw new OAuthError('invalid_grant', 'invalid authorization code');
    if (entry.redirectUri !== redirectUri)
      throw new OAuthError('invalid_grant', 'redirect_uri must match configuration');
    if (entry.challenge !== null) {
      if (!verifier) throw new OAuthError('invalid_grant', 'code verifier is missing');
      if (!/^[A-Za-z0-9\-._~]{43,128}$/.test(verifier))
        throw new OAuthError('invalid_grant', 'invalid code verifier');
      const computed = createHash('sha256').update(verifier).digest('base64url');
      if (computed !== entry.challenge) throw new OAuthError('invalid_grant', 'invalid code verifier');
    }
    return { userId: entry.userId, scope: entry.scope };
  }

  issueAccessToken(userId = this.integrationUserId, chain?: string): string {
    const token = `${this.orgId}!${randomBytes(30).toString('base64url')}`;
    this.accessTokens.set(token, {
      userId,
      issuedAt: this.now(),
      expired: false,
      ...(chain ? { chain } : {}),
    });
    return token;
  }

  /** A refresh token starting a new chain (a consent), or continuing `chain` (a rotation). */
  issueRefreshToken(userId: string, chain = randomBytes(8).toString('hex')): string {
    const token = `5Aep${randomBytes(40).toString('base64url')}`;
    this.refreshTokens.set(token, { userId, revoked: false, spent: false, chain });
    return token;
  }

  /**
   * The refresh grant: a new access token and, under rotation, a new refresh token (the old one spent). A spent
   * refresh token presented again revokes its chain, as Salesforce's refresh token rotation does on reuse.
   */
  refresh(refreshToken: string): { accessToken: string; refreshToken?: string; userId: string } {
    const entry = this.refreshTokens.get(refreshToken);
    if (entry?.spent) this.revokeChain(entry.chain);
    if (!entry || entry.revoked) throw new OAuthError('invalid_grant', 'expired access/refresh token');
    const accessToken = this.issueAccessToken(entry.userId, entry.chain);
    if (!this.options.rotateRefreshTokens) return { accessToken, userId: entry.userId };
    entry.spent = true;
    entry.revoked = true;
    return {
      accessToken,
      refreshToken: this.issueRefreshToken(entry.userId, entry.chain),
      userId: entry.userId,
    };
  }

  private revokeChain(chain: string): void {
    for (const entry of this.refreshTokens.values()) if (entry.chain === chain) entry.revoked = true;
    for (const entry of this.accessTokens.values()) if (entry.chain === chain) entry.expired = true;
  }

  /** The user behind a token, or null when Salesforce would answer INVALID_SESSION_ID. */
  sessionUser(token: string | undefined): string | null {
    if (!token) return null;
    const entry = this.accessTokens.get(token);
    if (!entry || entry.expired) return null;
    const ttl = this.options.accessTokenTtlMs;
    if (ttl !== undefined && this.now() - entry.issuedAt > ttl) return null;
    return entry.userId;
  }

  expireAccessTokens(): void {
    for (const entry of this.accessTokens.values()) entry.expired = true;
  }

  revokeRefreshTokens(): void {
    for (const entry of this.refreshTokens.values()) entry.revoked = true;
  }

  /**
   * `/services/oauth2/revoke`: a refresh token is revoked with every access token of its user (the stand-in does
   * not track which access token came from which refresh token); an access token alone is expired. False when
   * the token is unknown or already revoked (Salesforce's 400 `invalid_token`).
   */
  revokeToken(token: string): boolean {
    const refresh = this.refreshTokens.get(token);
    if (refresh) {
      if (refresh.revoked) return false;
      refresh.revoked = true;
      for (const entry of this.accessTokens.values()) {
        if (entry.userId === refresh.userId) entry.expired = true;
      }
      return true;
    }
    const access = this.accessTokens.get(token);
    if (!access || access.expired) return false;
    access.expired = true;
    return true;
  }

  user(userId: string): { Id: string; Username: string; Name: string } | undefined {
    return this.users.find((u) => u.Id === userId);
  }

  // ---- Accounts ----

  seedAccounts(input: number | SeedAccount[]): StoredAccount[] {
    const list: SeedAccount[] =
      typeof input === 'number'
        ? Array.from({ length: input }, (_, i) => ({
            Name: `Company ${String(this.accounts.size + i + 1).padStart(5, '0')}`,
            Website: `https://www.company${this.accounts.size + i + 1}.example`,
            Industry: 'Technology',
            BillingCountry: 'United States',
            BillingCity: 'Springfield',
          }))
        : input;
    const now = this.stamp();
    return list.map((seed) => {
      const account: StoredAccount = {
        Id: this.ids.next(KEY_PREFIX.account),
        Name: seed.Name ?? null,
        Website: seed.Website ?? null,
        Industry: seed.Industry ?? null,
        BillingCountry: seed.BillingCountry ?? null,
        BillingCity: seed.BillingCity ?? null,
        ShippingCountry: seed.ShippingCountry ?? null,
        ShippingCity: seed.ShippingCity ?? null,
        BillingCountryCode: seed.BillingCountryCode ?? null,
        ShippingCountryCode: seed.ShippingCountryCode ?? null,
        CreatedDate: now,
        LastModifiedDate: now,
        SystemModstamp: now,
        CreatedById: this.personUserId,
        LastModifiedById: this.personUserId,
        IsDeleted: false,
        MasterRecordId: null,
        IsPersonAccount: this.options.personAccounts && seed.IsPersonAccount === true,
        custom: {},
      };
      for (const [name, value] of Object.entries(seed)) {
        if (name in STANDARD_ACCOUNT_COLUMNS || value === undefined) continue;
        const field = this.customFields.get(name);
        if (!field) throw new Error(`seedAccounts: custom field ${name} does not exist yet`);
        const coerced = this.coerce(field, value);
        if ('failure' in coerced) throw new Error(`seedAccounts: ${coerced.failure.message}`);
        account.custom[name] = coerced.value;
      }
      this.accounts.set(account.Id, account);
      this.accountChanged({
        changeType: 'CREATE',
        ids: [account.Id],
        changed: filledFields(account),
        userId: account.CreatedById,
        origin: UI_ORIGIN,
      });
      return structuredClone(account);
    });
  }

  private accountChanged(change: LocalAccountChange): void {
    for (const listener of this.accountChangeListeners) listener(change);
  }

  /** A person restores a deleted Account from the recycle bin (a merged-away one included). */
  undeleteAccount(id: string): void {
    const account = this.getStored(id);
    if (!account?.IsDeleted) throw new Error(`undeleteAccount: Account ${id} is not in the recycle bin`);
    const now = this.stamp();
    account.IsDeleted = false;
    account.MasterRecordId = null;
    account.SystemModstamp = now;
    account.LastModifiedDate = now;
    account.LastModifiedById = this.personUserId;
    this.deleteLog.delete(account.Id);
    this.accountChanged({
      changeType: 'UNDELETE',
      ids: [account.Id],
      changed: filledFields(account),
      userId: this.personUserId,
      origin: UI_ORIGIN,
    });
  }

  getAccount(id: string): StoredAccount | undefined {
    const account = isSalesforceId(id) ? this.accounts.get(toId18(id)) : undefined;
    return account ? structuredClone(account) : undefined;
  }

  accountCount(): number {
    return [...this.accounts.values()].filter((a) => !a.IsDeleted).length;
  }

  /** A person's edit: bumps SystemModstamp and LastModifiedById to the person user. */
  updateAccountAsPerson(id: string, fields: Record<string, string | number | null>): StoredAccount {
    const failure = this.updateAccount(this.personUserId, id, fields, {
      enforceFieldSecurity: false,
      origin: UI_ORIGIN,
    });
    if (failure) throw new Error(`updateAccountAsPerson: ${failure.statusCode}: ${failure.message}`);
    return this.getAccount(id)!;
  }

  /** Soft delete (recycle bin); with `mergedInto`, as the losing side of a merge. Bumps SystemModstamp. */
  deleteAccount(id: string, options: { mergedInto?: string } = {}): void {
    const account = this.getStored(id);
    if (!account || account.IsDeleted) throw new Error(`deleteAccount: no live Account ${id}`);
    const now = this.stamp();
    account.IsDeleted = true;
    account.MasterRecordId = options.mergedInto ? toId18(options.mergedInto) : null;
    account.SystemModstamp = now;
    account.LastModifiedDate = now;
    account.LastModifiedById = this.personUserId;
    this.deleteLog.set(account.Id, this.now());
    this.accountChanged({
      changeType: 'DELETE',
      ids: [account.Id],
      changed: [],
      userId: this.personUserId,
      origin: UI_ORIGIN,
    });
  }

  /**
   * A person's merge, as Salesforce does it: the master survives with the field values the person kept
   * (`keep`; by default its own), the others go to the recycle bin with `MasterRecordId` set to the master.
   */
  mergeAccounts(
    masterId: string,
    loserIds: string[],
    keep: Record<string, string | number | null> = {},
  ): void {
    const master = this.getStored(masterId);
    if (!master || master.IsDeleted) throw new Error(`mergeAccounts: no live Account ${masterId}`);
    if (loserIds.length < 1 || loserIds.length > 2)
      throw new Error('mergeAccounts: Salesforce merges one master with one or two other records');
    for (const id of loserIds) this.deleteAccount(id, { mergedInto: master.Id });
    if (Object.keys(keep).length > 0) this.updateAccountAsPerson(master.Id, keep);
    else {
      const now = this.stamp();
      master.SystemModstamp = now;
      master.LastModifiedDate = now;
      master.LastModifiedById = this.personUserId;
      this.accountChanged({
        changeType: 'UPDATE',
        ids: [master.Id],
        changed: ['LastModifiedDate'],
        userId: this.personUserId,
        origin: UI_ORIGIN,
      });
    }
  }

  /** Empties the recycle bin of this record: gone from queryAll too, still in the delete log. */
  purgeAccount(id: string): void {
    const account = this.getStored(id);
    if (!account?.IsDeleted) throw new Error(`purgeAccount: Account ${id} is not in the recycle bin`);
    this.accounts.delete(account.Id);
  }

  /** A deleted Account stays in the recycle bin (and queryAll) for DELETE_LOG_DAYS days, as in Salesforce. */
  private inRecycleBin(id: string): boolean {
    const deletedAt = this.deleteLog.get(id);
    return deletedAt === undefined || deletedAt >= this.now() - DELETE_LOG_DAYS * 86_400_000;
  }

  /** An administrator empties the recycle bin: the delete log forgets everything deleted until now. */
  emptyRecycleBin(): void {
    const now = this.now();
    for (const [id, at] of this.deleteLog) if (at <= now) this.deleteLog.delete(id);
    for (const account of [...this.accounts.values()])
      if (account.IsDeleted) this.accounts.delete(account.Id);
    this.deleteLogPurgedAt = now;
  }

  /**
   * `GET sobjects/Account/deleted/?start=&end=`, with the rules Salesforce documents for getDeleted: seconds of
   * both bounds are ignored; `start` must precede `end` by more than one minute; more than `deletedIdLimit` ids
   * answer EXCEEDED_ID_LIMIT; the log answers for the last
   * DELETE_LOG_DAYS days only (less after the recycle bin was emptied), and an older `start` is refused with
   * INVALID_REPLICATION_DATE; `earliestDateAvailable` is where the log now starts; `latestDateCovered` the end of
   * what was covered.
   */
  deletedBetween(
    start: number,
    end: number,
  ): {
    deletedRecords: { id: string; deletedDate: string }[];
    earliestDateAvailable: string;
    latestDateCovered: string;
  } {
    const minute = (t: number) => Math.floor(t / 60_000) * 60_000;
    const from = minute(start);
    const to = minute(end);
    if (to - from <= 60_000) {
      this.count('getDeleted.refused');
      throw new SalesforceApiError(
        400,
        'INVALID_REPLICATION_DATE',
        'startDate must chronologically precede endDate by more than one minute',
      );
    }
    const retained = minute(Math.max(this.now() - DELETE_LOG_DAYS * 86_400_000, this.deleteLogPurgedAt));
    if (from < retained) {
      this.count('getDeleted.refused');
      throw new SalesforceApiError(
        400,
        'INVALID_REPLICATION_DATE',
        `startDate is before the earliest date available (${formatDateTime(retained)})`,
      );
    }
    const deletedRecords = [...this.deleteLog.entries()]
      .filter(([, at]) => at >= from && at < to)
      .sort(([, a], [, b]) => a - b)
      .map(([id, at]) => ({ id, deletedDate: formatDateTime(at) }));
    const limit = this.options.deletedIdLimit;
    if (deletedRecords.length > limit) {
      this.count('getDeleted.exceeded');
      throw new SalesforceApiError(
        400,
        'EXCEEDED_ID_LIMIT',
        `more than ${limit} ids found: choose start and end dates closer together`,
      );
    }
    return {
      deletedRecords,
      earliestDateAvailable: formatDateTime(Math.max(minute(this.createdAt), retained)),
      latestDateCovered: formatDateTime(to),
    };
  }

  private getStored(id: string): StoredAccount | undefined {
    return isSalesforceId(id) ? this.accounts.get(toId18(id)) : undefined;
  }

  private canEdit(userId: string, fieldName: string): boolean {
    if (!this.options.fieldLevelSecurity) return true;
    const fullName = `Account.${fieldName}`;
    return this.assignments.some((a) => {
      if (a.assigneeId !== userId) return false;
      const ps = [...this.permissionSets.values()].find((p) => p.id === a.permissionSetId);
      return ps?.fieldPermissions.get(fullName)?.editable === true;
    });
  }

  /** The standard Account fields this org has (the picklists' code fields only when they are on). */
  accountStandardFields(): string[] {
    return Object.keys(STANDARD_ACCOUNT_COLUMNS).filter((name) => this.hasStandardColumn(name));
  }

  /** Whether this org's Account has a standard column (some exist only with a feature on). */
  private hasStandardColumn(name: string): boolean {
    if (PICKLIST_ONLY_COLUMNS.has(name)) return this.countryPicklists;
    if (name === PERSON_ACCOUNT_COLUMN) return this.options.personAccounts;
    return name in STANDARD_ACCOUNT_COLUMNS;
  }

  /** Throws SalesforceApiError(INVALID_FIELD) for a field Account does not have, as a whole-call error. */
  checkFieldsExist(names: Iterable<string>): void {
    for (const name of names) {
      if (name === 'Id' || this.hasStandardColumn(name) || this.customFields.has(name)) continue;
      throw new SalesforceApiError(
        400,
        'INVALID_FIELD',
        `No such column '${name}' on sobject of type Account`,
        [name],
      );
    }
  }

  private coerce(field: CustomFieldDef, value: unknown): { value: CellValue } | { failure: RecordFailure } {
    const name = field.fullName;
    if (value === null) return { value: null };
    switch (field.type) {
      case 'Number': {
        if (typeof value !== 'number' || !Number.isFinite(value)) {
          return {
            failure: {
              statusCode: 'INVALID_TYPE_ON_FIELD_IN_RECORD',
              message: `${field.label}: value not of required type: ${String(value)}`,
              fields: [name],
            },
          };
        }
        const scale = field.scale ?? 0;
        const integerDigits = (field.precision ?? 18) - scale;
        if (Math.abs(value) >= 10 ** integerDigits) {
          return {
            failure: {
              statusCode: 'NUMBER_OUTSIDE_VALID_RANGE',
              message: `${field.label}: value outside of valid range on numeric field: ${value}`,
              fields: [name],
            },
          };
        }
        return { value: Number(value.toFixed(scale)) };
      }
      case 'DateTime': {
        const ms = typeof value === 'string' ? Date.parse(value) : Number.NaN;
        if (Number.isNaN(ms)) {
          return {
            failure: {
              statusCode: 'INVALID_TYPE_ON_FIELD_IN_RECORD',
              message: `${field.label}: value not of required type: ${String(value)}`,
              fields: [name],
            },
          };
        }
        return { value: ms };
      }
      default: {
        const text = String(value);
        const max = field.type === 'Url' ? 255 : (field.length ?? 255);
        if (text.length > max) {
          return {
            failure: {
              statusCode: 'STRING_TOO_LONG',
              message: `${field.label}: data value too large: ${text.slice(0, 40)}... (max length=${max})`,
              fields: [name],
            },
          };
        }
        return { value: text === '' ? null : text };
      }
    }
  }

  /**
   * One record update as sObject Collections and Bulk API 2.0 do it; null on success. `origin`: the change
   * event's `changeOrigin`, from the call that made it (change-origin.ts).
   */
  updateAccount(
    userId: string,
    id: string,
    fields: Record<string, unknown>,
    options: { origin: string; enforceFieldSecurity?: boolean; injectFaults?: boolean },
  ): RecordFailure | null {
    if (!isSalesforceId(id))
      return {
        statusCode: 'MALFORMED_ID',
        message: `Account ID: id value of incorrect type: ${id}`,
        fields: ['Id'],
      };
    const account = this.getStored(id);
    if (!account)
      return { statusCode: 'INVALID_CROSS_REFERENCE_KEY', message: 'invalid cross reference id', fields: [] };
    if (account.IsDeleted)
      return { statusCode: 'ENTITY_IS_DELETED', message: 'entity is deleted', fields: [] };

    const notWritable: string[] = [];
    for (const name of Object.keys(fields)) {
      if (name in STANDARD_ACCOUNT_COLUMNS && !UPDATEABLE_STANDARD.has(name)) notWritable.push(name);
      else if (
        this.customFields.has(name) &&
        options.enforceFieldSecurity !== false &&
        !this.canEdit(userId, name)
      ) {
        notWritable.push(name);
      }
    }
    if (notWritable.length > 0) {
      return {
        statusCode: 'INVALID_FIELD_FOR_INSERT_UPDATE',
        message: `Unable to create/update fields: ${notWritable.join(', ')}. Please check the security settings of this field and verify that it is read/write for your profile or permission set.`,
        fields: notWritable,
      };
    }
    if (options.injectFaults) {
      if (this.faults.lockRowShare > 0 && this.random() < this.faults.lockRowShare) {
        return {
          statusCode: 'UNABLE_TO_LOCK_ROW',
          message: `unable to obtain exclusive access to this record or 1 records: ${account.Id}`,
          fields: [],
        };
      }
      if (this.faults.failShare > 0 && this.random() < this.faults.failShare) {
        return {
          statusCode: 'FIELD_CUSTOM_VALIDATION_EXCEPTION',
          message: 'A validation rule refused this Account (injected fault)',
          fields: [],
        };
      }
    }

    const next: Record<string, CellValue> = {};
    for (const [name, value] of Object.entries(fields)) {
      if (UPDATEABLE_STANDARD.has(name)) {
        if (value !== null && typeof value !== 'string') {
          return {
            statusCode: 'INVALID_TYPE_ON_FIELD_IN_RECORD',
            message: `${name}: value not of required type`,
            fields: [name],
          };
        }
        if (typeof value === 'string' && value.length > STANDARD_LENGTH[name]!) {
          return { statusCode: 'STRING_TOO_LONG', message: `${name}: data value too large`, fields: [name] };
        }
        next[name] = value === '' ? null : (value as string | null);
        continue;
      }
      const field = this.customFields.get(name)!;
      const coerced = this.coerce(field, value);
      if ('failure' in coerced) return coerced.failure;
      next[name] = coerced.value;
    }
    const now = this.stamp();
    const changed: string[] = [];
    for (const [name, value] of Object.entries(next)) {
      const row = account as unknown as Record<string, CellValue>;
      const before = UPDATEABLE_STANDARD.has(name) ? row[name] : account.custom[name];
      if (before !== value) changed.push(name);
      if (UPDATEABLE_STANDARD.has(name)) row[name] = value;
      else account.custom[name] = value;
    }
    account.LastModifiedDate = now;
    account.SystemModstamp = now;
    account.LastModifiedById = userId;
    if (changed.length > 0) {
      this.accountChanged({
        changeType: 'UPDATE',
        ids: [account.Id],
        changed: [...changed, 'LastModifiedDate'],
        userId,
        origin: options.origin,
      });
    }
    return null;
  }

  // ---- metadata ----

  upsertCustomField(def: CustomFieldDef): { created: boolean } | { failure: RecordFailure } {
    const m = /^Account\.([A-Za-z][A-Za-z0-9_]*__c)$/.exec(def.fullName);
    const invalid = (message: string) => ({
      failure: { statusCode: 'FIELD_INTEGRITY_EXCEPTION', message, fields: [] },
    });
    if (!m)
      return invalid(`${def.fullName}: only Account custom fields (Account.Name__c) are supported here`);
    if (!def.label) return invalid(`${def.fullName}: Field Label: You must enter a value`);
    switch (def.type) {
      case 'Text':
        if (!def.length || def.length < 1 || def.length > 255)
          return invalid(`${def.fullName}: Length: Text fields need a length from 1 to 255`);
        break;
      case 'LongTextArea':
        if (!def.length || def.length < 256 || def.length > 131072)
          return invalid(`${def.fullName}: Length: Long text areas need a length from 256 to 131,072`);
        if (!def.visibleLines) return invalid(`${def.fullName}: Visible Lines: You must enter a value`);
        break;
      case 'Number': {
        const precision = def.precision ?? 0;
        const scale = def.scale ?? 0;
        if (precision < 1 || precision > 18 || scale < 0 || scale > precision) {
          return invalid(`${def.fullName}: Number fields need precision 1-18 and scale 0-precision`);
        }
        break;
      }
      case 'DateTime':
      case 'Url':
        break;
      default:
        return invalid(`${def.fullName}: unsupported field type ${String(def.type)}`);
    }
    const name = m[1]!;
    const existed = this.customFields.has(name);
    this.customFields.set(name, { ...def, fullName: name });
    return { created: !existed };
  }

  readCustomField(fullName: string): CustomFieldDef | undefined {
    const m = /^Account\.(.+)$/.exec(fullName);
    const def = m ? this.customFields.get(m[1]!) : undefined;
    return def ? { ...def, fullName } : undefined;
  }

  upsertPermissionSet(input: {
    fullName: string;
    label: string;
    fieldPermissions: { field: string; readable: boolean; editable: boolean }[];
    objectPermissions?: ({ object: string } & ObjectAccess)[];
  }): { created: boolean } | { failure: RecordFailure } {
    if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(input.fullName)) {
      return {
        failure: {
          statusCode: 'INVALID_NAME',
          message: `invalid permission set name ${input.fullName}`,
          fields: [],
        },
      };
    }
    if (!input.label)
      return {
        failure: {
          statusCode: 'REQUIRED_FIELD_MISSING',
          message: 'Label: You must enter a value',
          fields: [],
        },
      };
    for (const p of input.fieldPermissions) {
      if (
        !this.readCustomField(p.field) &&
        !/^Account\.(Name|Website|Industry|(Billing|Shipping)(Country|City))$/.test(p.field)
      ) {
        return {
          failure: {
            statusCode: 'FIELD_INTEGRITY_EXCEPTION',
            message: `In field: field - no CustomField named ${p.field} found`,
            fields: [],
          },
        };
      }
    }
    // Salesforce keeps edit only with read (FieldPermissions.PermissionsEdit requires PermissionsRead).
    const unreadable = input.fieldPermissions.find((p) => p.editable && !p.readable);
    if (unreadable) {
      return {
        failure: {
          statusCode: 'FIELD_INTEGRITY_EXCEPTION',
          message: `${unreadable.field}: edit access requires read access`,
          fields: [],
        },
      };
    }
    const existing = this.permissionSets.get(input.fullName);
    const state: PermissionSetState = {
      id: existing?.id ?? this.ids.next(KEY_PREFIX.permissionSet),
      name: input.fullName,
      label: input.label,
      fieldPermissions: new Map(
        input.fieldPermissions.map((p) => [p.field, { readable: p.readable, editable: p.editable }]),
      ),
      // An upsert rewrites the objects it names and keeps the others, as the Metadata API does.
      objectPermissions: new Map([
        ...(existing?.objectPermissions ?? new Map<string, ObjectAccess>()),
        ...(input.objectPermissions ?? []).map(({ object, ...access }) => [object, access] as const),
      ]),
    };
    this.permissionSets.set(input.fullName, state);
    return { created: !existing };
  }

  /**
   * `POST /sobjects/Task`: an activity on an Account (`WhatId`). The fields the connector sends are checked;
   * a WhatId that names no live Account is refused as Salesforce refuses it.
   */
  createTask(userId: string, fields: Record<string, unknown>): string {
    const whatId = typeof fields.WhatId === 'string' ? fields.WhatId : '';
    const account = this.getAccount(whatId);
    if (!account || account.IsDeleted) {
      throw new SalesforceApiError(400, 'INVALID_CROSS_REFERENCE_KEY', 'invalid cross reference id', [
        'WhatId',
      ]);
    }
    const subject = typeof fields.Subject === 'string' ? fields.Subject : '';
    if (subject.length > 255) {
      throw new SalesforceApiError(400, 'STRING_TOO_LONG', 'Subject: data value too large', ['Subject']);
    }
    const status = typeof fields.Status === 'string' ? fields.Status : undefined;
    if (status !== undefined && !this.taskStatuses.some((s) => s.ApiName === status)) {
      throw new SalesforceApiError(
        400,
        'INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST',
        `Status: bad value for restricted picklist field: ${status}`,
        ['Status'],
      );
    }
    const id = this.ids.next(KEY_PREFIX.task);
    this.tasks.push({
      Id: id,
      WhatId: account.Id,
      Subject: subject,
      Description: typeof fields.Description === 'string' ? fields.Description : null,
      ActivityDate: typeof fields.ActivityDate === 'string' ? fields.ActivityDate : null,
      Status: status ?? this.taskStatuses.find((s) => s.IsDefault)?.ApiName ?? 'Not Started',
      CreatedById: userId,
    });
    return id;
  }

  /** An admin renames a Task status value (label and API name); Tasks already made keep theirs. */
  renameTaskStatus(from: string, to: string): void {
    const status = this.taskStatuses.find((s) => s.ApiName === from);
    if (!status) throw new Error(`renameTaskStatus: no Task status ${from}`);
    status.ApiName = to;
    status.MasterLabel = to;
  }

  /** Tasks on one Account, oldest first (tests and the demo read them). */
  tasksFor(accountId: string): LocalTask[] {
    const id = isSalesforceId(accountId) ? toId18(accountId) : accountId;
    return this.tasks.filter((t) => t.WhatId === id).map((t) => ({ ...t }));
  }

  assignPermissionSet(assigneeId: string, permissionSetId: string): string {
    const ps = [...this.permissionSets.values()].find(
      (p) => isSalesforceId(permissionSetId) && p.id === toId18(permissionSetId),
    );
    if (!ps)
      throw new SalesforceApiError(400, 'INVALID_CROSS_REFERENCE_KEY', 'invalid cross reference id', [
        'PermissionSetId',
      ]);
    if (!isSalesforceId(assigneeId) || !this.user(toId18(assigneeId))) {
      throw new SalesforceApiError(400, 'INVALID_CROSS_REFERENCE_KEY', 'invalid cross reference id', [
        'AssigneeId',
      ]);
    }
    const assignee = toId18(assigneeId);
    if (this.assignments.some((a) => a.assigneeId === assignee && a.permissionSetId === ps.id)) {
      throw new SalesforceApiError(
        400,
        'DUPLICATE_VALUE',
        `Duplicate PermissionSetAssignment. Assignee: ${assignee}; Permission Set: ${ps.id}`,
      );
    }
    const id = this.ids.next(KEY_PREFIX.permissionSetAssignment);
    this.assignments.push({ id, assigneeId: assignee, permissionSetId: ps.id });
    return id;
  }

  isPermissionSetAssigned(name: string, userId = this.integrationUserId): boolean {
    const ps = this.permissionSets.get(name);
    return (
      ps !== undefined && this.assignments.some((a) => a.assigneeId === userId && a.permissionSetId === ps.id)
    );
  }

  /** A permission set as the Metadata API reads it back: its label and per-field access, by field name. */
  readPermissionSet(name: string):
    | {
        fullName: string;
        label: string;
        fieldPermissions: { field: string; readable: boolean; editable: boolean }[];
        objectPermissions: ({ object: string } & ObjectAccess)[];
      }
    | undefined {
    const ps = this.permissionSets.get(name);
    if (!ps) return undefined;
    const fieldPermissions = [...ps.fieldPermissions.entries()]
      .map(([field, access]) => ({ field, ...access }))
      .sort((a, b) => a.field.localeCompare(b.field));
    const objectPermissions = [...ps.objectPermissions.entries()]
      .map(([object, access]) => ({ object, ...access }))
      .sort((a, b) => a.object.localeCompare(b.object));
    return { fullName: ps.name, label: ps.label, fieldPermissions, objectPermissions };
  }

  permissionSetFields(name: string): string[] {
    return [...(this.permissionSets.get(name)?.fieldPermissions.keys() ?? [])].sort();
  }

  // ---- SOQL ----

  private accountView(): ObjectView {
    const columns = new Map<string, { name: string; kind: ColumnKind }>();
    for (const [name, kind] of Object.entries(STANDARD_ACCOUNT_COLUMNS)) {
      if (!this.hasStandardColumn(name)) continue;
      columns.set(name.toLowerCase(), { name, kind });
    }
    for (const [name, def] of this.customFields) {
      const kind: ColumnKind =
        def.type === 'Number' ? 'number' : def.type === 'DateTime' ? 'datetime' : 'string';
      columns.set(name.toLowerCase(), { name, kind });
    }
    return {
      type: 'Account',
      schema: {
        column: (name) => columns.get(name.toLowerCase()),
        canonicalId: (v) => (isSalesforceId(v) ? toId18(v) : v),
      },
      rows: (all) =>
        [...this.accounts.values()]
          .filter((a) => !a.IsDeleted || (all && this.inRecycleBin(a.Id)))
          .map((a) => {
            const { custom, ...standard } = a;
            const row: Record<string, CellValue> = { ...standard };
            for (const name of this.customFields.keys()) row[name] = custom[name] ?? null;
            return row;
          }),
    };
  }

  private simpleView(
    type: string,
    columns: Record<string, ColumnKind>,
    rows: Record<string, CellValue>[],
  ): ObjectView {
    const byLower = new Map(
      Object.entries(columns).map(([name, kind]) => [name.toLowerCase(), { name, kind }]),
    );
    return {
      type,
      schema: {
        column: (n) => byLower.get(n.toLowerCase()),
        canonicalId: (v) => (isSalesforceId(v) ? toId18(v) : v),
      },
      rows: () => rows,
    };
  }

  private view(object: string): ObjectView {
    switch (object.toLowerCase()) {
      case 'account':
        return this.accountView();
      case 'taskstatus':
        return this.simpleView(
          'TaskStatus',
          {
            Id: 'id',
            MasterLabel: 'string',
            ApiName: 'string',
            IsClosed: 'boolean',
            IsDefault: 'boolean',
            SortOrder: 'number',
          },
          this.taskStatuses.map((s) => ({ ...s })),
        );
      case 'organization':
        return this.simpleView(
          'Organization',
          { Id: 'id', Name: 'string', IsSandbox: 'boolean', DefaultAccountAccess: 'string' },
          [
            {
              Id: this.orgId,
              Name: 'Local Salesforce',
              IsSandbox: this.isSandbox,
              DefaultAccountAccess: this.accountSharing,
            },
          ],
        );
      case 'user':
        return this.simpleView('User', { Id: 'id', Username: 'string', Name: 'string' }, this.users);
      case 'permissionset':
        return this.simpleView(
          'PermissionSet',
          {
            Id: 'id',
            Name: 'string',
            Label: 'string',
            IsOwnedByProfile: 'boolean',
            PermissionsViewAllData: 'boolean',
          },
          [
            {
              Id: PROFILE_PERMISSION_SET_ID,
              Name: 'X00e5g000000Integration',
              Label: 'Integration user profile',
              IsOwnedByProfile: true,
              PermissionsViewAllData: this.integrationUserAccess === 'view-all-data',
            },
            ...[...this.permissionSets.values()].map((p) => ({
              Id: p.id,
              Name: p.name,
              Label: p.label,
              IsOwnedByProfile: false,
              PermissionsViewAllData: false,
            })),
          ],
        );
      case 'objectpermissions':
        return this.simpleView(
          'ObjectPermissions',
          {
            Id: 'id',
            ParentId: 'id',
            SobjectType: 'string',
            PermissionsRead: 'boolean',
            PermissionsViewAllRecords: 'boolean',
          },
          [
            {
              Id: PROFILE_ACCOUNT_PERMISSION_ID,
              ParentId: PROFILE_PERMISSION_SET_ID,
              SobjectType: 'Account',
              PermissionsRead: true,
              PermissionsViewAllRecords: this.integrationUserAccess !== 'own',
            },
          ],
        );
      case 'permissionsetassignment':
        return this.simpleView(
          'PermissionSetAssignment',
          { Id: 'id', AssigneeId: 'id', PermissionSetId: 'id' },
          [
            {
              Id: PROFILE_ASSIGNMENT_ID,
              AssigneeId: this.integrationUserId,
              PermissionSetId: PROFILE_PERMISSION_SET_ID,
            },
            ...this.assignments.map((a) => ({
              Id: a.id,
              AssigneeId: a.assigneeId,
              PermissionSetId: a.permissionSetId,
            })),
          ],
        );
      default:
        throw new SoqlError('INVALID_TYPE', `sObject type '${object}' is not supported.`);
    }
  }

  /** Runs a statement and keeps the rows after the first page behind a locator, as `nextRecordsUrl`. */
  query(soql: string, options: { all: boolean; version: string }): Record<string, unknown> {
    const q = parseSoql(soql);
    const view = this.view(q.object);
    const selected = q.fields.map((f) => requireColumn(view.schema, f));
    let rows = view.rows(options.all).filter((row) => (q.where ? evaluate(q.where, row, view.schema) : true));
    sortRows(rows, q.orderBy, view.schema);
    if (q.limit !== null) rows = rows.slice(0, q.limit);
    const output = rows.map((row) => {
      const out: Record<string, unknown> = {
        attributes: {
          type: view.type,
          url: `/services/data/${options.version}/sobjects/${view.type}/${String(row.Id)}`,
        },
      };
      for (const col of selected) {
        const value = row[col.name] ?? null;
        out[col.name] = col.kind === 'datetime' && typeof value === 'number' ? formatDateTime(value) : value;
      }
      return out;
    });
    return this.page(output, 0, options.version);
  }

  private page(rows: Record<string, unknown>[], offset: number, version: string): Record<string, unknown> {
    const size = this.options.queryPageSize;
    const records = rows.slice(offset, offset + size);
    const done = offset + size >= rows.length;
    const result: Record<string, unknown> = { totalSize: rows.length, done, records };
    if (!done) {
      const locator = `${this.ids.next(KEY_PREFIX.queryLocator).slice(0, 15)}-${offset + size}`;
      this.locators.set(locator, { rows, version });
      result.nextRecordsUrl = `/services/data/${version}/query/${locator}`;
    }
    return result;
  }

  queryMore(locator: string): Record<string, unknown> {
    const entry = this.locators.get(locator);
    const offset = Number(locator.split('-')[1]);
    if (!entry || !Number.isInteger(offset)) {
      throw new SalesforceApiError(400, 'INVALID_QUERY_LOCATOR', 'invalid query locator');
    }
    this.locators.delete(locator);
    return this.page(entry.rows, offset, entry.version);
  }

  /** What Salesforce does to locators left idle too long. */
  expireQueryLocators(): void {
    this.locators.clear();
  }

  newBulkJobId(): string {
    return this.ids.next(KEY_PREFIX.bulkJob);
  }
}

export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
  ) {
    super(`${error}: ${description}`);
    this.name = 'OAuthError';
  }
}
