import type { FieldKey, FieldValue, FieldValues } from '../fields.js';
import type { CrmKind } from './kind.js';
import type { ValueGrain } from './value-grain.js';

/**
 * The one interface every CRM implements, shaped by what the pipeline needs. No SDK type crosses it:
 * records are plain objects, failures are the classes of ./errors.ts or per-record `WriteResult`s.
 */

export type { CrmKind } from './kind.js';

/** Provider facts kept as data so batch and page sizes are never scattered literals. */
export interface ProviderLimits {
  /** Records per list page. */
  pageSize: number;
  /** Ids per batch read. */
  readBatchSize: number;
  /** Records per batch write (the CRM's batch or collection size). */
  writeBatchSize: number;
  /** Requests allowed per `windowMs` per installation, for the shared limiter. */
  requestsPerWindow: number;
  windowMs: number;
  /** How finely the CRM keeps numbers and instants: values equal at this grain need no write. */
  valueGrain: ValueGrain;
}

export interface CompanyRecord {
  id: string;
  name: string | null;
  domain: string | null;
  industry: string | null;
  country: string | null;
  city: string | null;
  /** The connector's own fields as they are on the record now (missing or empty -> null). */
  fields: Partial<FieldValues>;
}

export interface RecordUpdate {
  id: string;
  /** Only the keys present are written; `null` clears the field. */
  values: Partial<Record<FieldKey, FieldValue>>;
}

export type RecordErrorCode =
  /** Deleted, or merged into another record (`mergedInto` then says which). */
  | 'NOT_FOUND'
  /** Field-level security or a missing field: a person must act. */
  | 'FIELD_NOT_WRITABLE'
  /** The CRM rejected a value. */
  | 'INVALID_VALUE'
  /** Row lock or another transient condition: try this record again. */
  | 'RETRYABLE'
  | 'UNKNOWN';

export interface RecordError {
  code: RecordErrorCode;
  message: string;
  /** The provider's own code (`ENTITY_IS_DELETED`, `OBJECT_NOT_FOUND`, ...). */
  providerCode?: string;
  mergedInto?: string;
}

export type WriteResult = { id: string; ok: true } | { id: string; ok: false; error: RecordError };

export interface Page<T> {
  records: T[];
  nextCursor: string | null;
}

export interface EnsureFieldsResult {
  created: string[];
  existing: string[];
  /** Existing fields whose type differed and was corrected (or could not be: see `problems`). */
  reconciled: string[];
  problems: string[];
  /**
   * Set-up the connector runs without, that the CRM refused (selecting records for change events: changes then
   * arrive by the poll), in words for an admin. Reported, never a reason to call the installation or its fields
   * broken.
   */
  notes?: string[];
}

export interface ApiUsage {
  /** Free text for people: "1,234 of 15,000 daily calls", "87 of 110 per 10 s". */
  summary: string;
  used?: number;
  limit?: number;
}

/**
 * Told each usage reading a connector takes from the CRM's answers (its rate-limit headers, its limits
 * resource), as `apiUsage()` would say it right then: the application keeps the last one for every process
 * (ConnectorInput.onUsage). Called in the middle of the CRM call, so it must not throw.
 */
export type UsageListener = (reading: ApiUsage) => void;

/** One CRM-side change, whatever its source (a webhook, a poll). */
export type CrmChange =
  | { kind: 'created'; recordId: string }
  | { kind: 'renamed'; recordId: string }
  | { kind: 'domainChanged'; recordId: string }
  | {
      kind: 'slugChanged';
      recordId: string;
      slug: string | null;
      /** Who changed it, when the CRM says (its user or source id): the decision log. */
      by?: string | null;
    }
  | { kind: 'deleted'; recordId: string }
  | {
      kind: 'merged';
      recordId: string;
      mergedInto: string;
      mergedIds: string[];
      /** The slug the merged-away record carried, when the CRM still shows it (in a recycle bin). */
      mergedSlug?: string | null;
    };

/** An entry on the record's timeline (a note, a task: the provider's `activity` says which). */
export interface RecordActivity {
  subject: string;
  body: string;
  /** ISO 8601: when what it records happened. */
  at: string;
}

export type CrmEnvironment = 'production' | 'test';

/**
 * Whether the connector's user can read every company record: `complete` true (it can), false (it sees only
 * some, so a backfill would be silently partial) or null (the CRM would not say). `detail` says why.
 */
export interface ReadAccess {
  complete: boolean | null;
  detail: string;
}

export interface CrmConnector {
  readonly kind: CrmKind;
  readonly limits: ProviderLimits;
  /** One page of companies with the fields matching needs and the connector's own fields. */
  listCompanies(cursor: string | null): Promise<Page<CompanyRecord>>;
  /** Records that no longer exist are left out of the answer. */
  readCompanies(ids: string[]): Promise<CompanyRecord[]>;
  /** At most `limits.writeBatchSize` updates; one result per update, in the same order. */
  writeCompanies(updates: RecordUpdate[]): Promise<WriteResult[]>;
  /** Creates the connector's fields where missing, idempotently. */
  ensureFields(): Promise<EnsureFieldsResult>;
  /** Records whose `report_slug` equals `slug` (used to rebuild the slug index). */
  findBySlug(slug: string): Promise<CompanyRecord[]>;
  /**
   * At most `limit` records whose name contains `query` (the CRM's own search, case-insensitive), for the admin's
   * search of linked records: the connector keeps no names of those. Absent where the CRM offers no such search.
   */
  findByName?(query: string, limit: number): Promise<CompanyRecord[]>;
  /** The CRM's API allocation as last seen, for the admin page; null when unknown. */
  apiUsage(): ApiUsage | null;
  /**
   * Whether the portal or org holds real data (`production`) or is for testing (a developer test account or
   * a sandbox). Anything the CRM does not clearly call a test is production.
   */
  environment(): Promise<CrmEnvironment>;
  /** From this many updates on, `writeCompaniesBulk` (the CRM's bulk API) is the cheaper path. */
  readonly bulkThreshold?: number;
  /** Any number of updates through the CRM's bulk API; one result per update, in order. */
  writeCompaniesBulk?(updates: RecordUpdate[]): Promise<WriteResult[]>;
  /**
   * Which of these records were merged away, and into which record (keyed by the CRM's canonical id). For CRMs
   * where a merged-away record stays findable with its survivor before its change event arrives (a recycle
   * bin that keeps the merge's survivor); one call per read batch.
   */
  survivorsOf?(recordIds: readonly string[]): Promise<Map<string, string>>;
  /** Puts an activity on the record's timeline (alerts, when the installation switched it on). */
  createActivity?(recordId: string, activity: RecordActivity): Promise<void>;
  /** For CRMs whose sharing rules may hide records from the connector's user; `doctor` asks. */
  readAccess?(): Promise<ReadAccess>;
  /**
   * The same connector reading the connector's own fields the CRM does not have as empty, instead of failing
   * (a preview before approval creates no field). Absent where reads do so already (a CRM that leaves unknown
   * fields out of its answer).
   */
  withAbsentFieldsEmpty?(): CrmConnector;
}

/** A record seen by a change poll. */
export interface ChangedRecord extends CompanyRecord {
  /** ISO timestamps from the CRM. */
  createdAt: string;
  modifiedAt: string;
  /** The CRM user who last changed the record, when the CRM says. */
  modifiedBy?: string | null;
}

/**
 * A CRM without company webhooks to rely on is polled. The poll returns the changed records
 * themselves; the pipeline compares them with what it last saw to tell a rename or a hand-set slug from the
 * connector's own writes (which bump the modification stamp too).
 */
export interface PolledCrmConnector extends CrmConnector {
  /**
   * Records modified after `cursor` (opaque, stored by the caller), oldest first, with the next cursor.
   * Deleted and merged-away records are not among `records`: they come as `changes` (`deleted`, `merged`).
   * `resync`: the CRM cannot say what was deleted since the cursor; the caller lists every record and
   * forgets those gone from the CRM.
   */
  listChangedSince(
    cursor: string | null,
  ): Promise<{ records: ChangedRecord[]; cursor: string; changes?: CrmChange[]; resync?: boolean }>;
}
