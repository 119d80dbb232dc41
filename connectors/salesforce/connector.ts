import type { HttpRequestOptions } from 'jsforce';
import { z } from 'zod';
import type { AccessTokenSource } from '../../src/auth/token-manager.js';
import type {
  ApiUsage,
  ChangedRecord,
  CompanyRecord,
  CrmChange,
  CrmEnvironment,
  EnsureFieldsResult,
  Page,
  PolledCrmConnector,
  ProviderLimits,
  ReadAccess,
  RecordActivity,
  RecordUpdate,
  UsageListener,
  WriteResult,
} from '../../src/crm/connector.js';
import { CrmBadRequestError } from '../../src/crm/errors.js';
import type { RequestGate } from '../../src/crm/request-gate.js';
import type { Installation } from '../../src/installations/store.js';
import type { Logger } from '../../src/log.js';
import { type Priority, type RetryPolicy, SalesforceApi } from './api/api-client.js';
import { type BulkOptions, type BulkOutcome, writeAccountsBulk } from './api/bulk.js';
import { soqlIdList, soqlLikeContains, soqlQuote } from './api/soql.js';
import type { SalesforceUsageTracker } from './api/usage.js';
import { type ChangedRows, changedSinceWhere, takeChangedRows } from './changes/changed-rows.js';
import {
  type ChangeCursor,
  decodeChangeCursor,
  decodeListCursor,
  encodeChangeCursor,
  encodeListCursor,
} from './changes/cursors.js';
import { type DeleteLogStep, pollDeleteLog } from './changes/delete-log.js';
import type { SalesforceSettings } from './config.js';
import { describeFailure, toRecordError } from './errors.js';
import { ensureSalesforceFields } from './fields/ensure-fields.js';
import { SALESFORCE_FIELDS, salesforceField } from './fields/field-names.js';
import { accountReadAccess } from './fields/read-access.js';
import { hostPolicyOf, salesforceHostProblem } from './hosts.js';
import { SalesforceOrgMemory } from './org-memory.js';
import {
  ACCOUNT_SOBJECT,
  BULK_THRESHOLD,
  CHANGE_POLL,
  ERROR_CODES,
  PERSON_ACCOUNT_FIELD,
  SALESFORCE_KIND,
  SALESFORCE_LIMITS,
  SALESFORCE_PROVIDER,
} from './provider.js';
import { accountFieldNames, accountShape } from './records/account-shape.js';
import { isSalesforceId, toId18 } from './records/ids.js';
import { type PreparedOk, prepareUpdates } from './records/prepare-updates.js';
import { accountRowSchema, accountSelectFields, toCompanyRecord } from './records/records.js';
import { taskDescription, taskSubject } from './records/task-fields.js';
import { closedTaskStatus, isRefusedPicklistValue } from './records/task-status.js';

/**
 * The Salesforce side of the CRM interface: Accounts read with SOQL (paged through `nextRecordsUrl`), written
 * with sObject Collections (Bulk API 2.0 for backfill batches of BULK_THRESHOLD or more), polled for changes by
 * SystemModstamp. Nothing jsforce-typed leaves this class.
 */

const queryResultSchema = z.object({
  totalSize: z.number(),
  done: z.boolean(),
  records: z.array(z.unknown()),
  nextRecordsUrl: z.string().optional(),
});
type QueryResult = z.infer<typeof queryResultSchema>;

const collectionResultSchema = z.array(
  z.object({
    id: z.string().nullish(),
    success: z.boolean(),
    errors: z
      .array(
        z.object({ statusCode: z.string(), message: z.string(), fields: z.array(z.string()).optional() }),
      )
      .default([]),
  }),
);

const mergedRowSchema = z.object({ Id: z.string(), MasterRecordId: z.string().nullish() });

export interface SalesforceConnectorDeps {
  installation: Pick<Installation, 'id' | 'instanceUrl' | 'externalId'>;
  tokens: AccessTokenSource;
  gate: RequestGate;
  config: SalesforceSettings;
  /**
   * What the org's connectors share (org-memory.ts): the provider keeps one per installation, so every
   * connector of the org sees the same daily usage, Account shape and closed Task status.
   */
  memory?: SalesforceOrgMemory;
  /** The daily usage tracker, when no `memory` is given (tests). */
  usage?: SalesforceUsageTracker;
  /** Told the daily usage after each response of the org that carried it (ConnectorInput.onUsage). */
  onUsage?: UsageListener;
  /** Background work (backfills, polls, reconcile) pauses near the daily allocation; urgent work does not. */
  priority?: Priority;
  logger?: Logger;
  retry?: Partial<RetryPolicy>;
  httpOptions?: HttpRequestOptions;
  bulk?: Partial<BulkOptions>;
  /** Most changed records one `listChangedSince` returns; the cursor continues from the last one. */
  maxChangesPerPoll?: number;
  /** How long a second must be over before its changes are handed out (CHANGE_POLL.settleMs). */
  changeSettleMs?: number;
  sleep?: (ms: number) => Promise<void>;
  /** Select only the connector's own fields the org's Account has; the others read as empty (withAbsentFieldsEmpty). */
  absentFieldsEmpty?: boolean;
}

/** The connector's own Account fields, the ones a fresh org lacks until they are created. */
const OWN_FIELDS: ReadonlySet<string> = new Set(SALESFORCE_FIELDS.map((f) => f.salesforce));

const organizationRowSchema = z.looseObject({ IsSandbox: z.boolean() });

export class SalesforceConnector implements PolledCrmConnector {
  readonly kind = SALESFORCE_KIND;
  readonly limits: ProviderLimits = SALESFORCE_LIMITS;
  /** From this many updates on, `writeCompaniesBulk` is the cheaper path (Salesforce's own advice). */
  readonly bulkThreshold = BULK_THRESHOLD;
  readonly priority: Priority;
  private readonly deps: SalesforceConnectorDeps & { memory: SalesforceOrgMemory };

  constructor(
    private readonly api: SalesforceApi,
    deps: SalesforceConnectorDeps,
    priority?: Priority,
  ) {
    this.priority = priority ?? deps.priority ?? 'background';
    const memory = deps.memory ?? new SalesforceOrgMemory(deps.config.salesforce.usagePauseShare, api.usage);
    this.deps = { ...deps, memory };
  }

  private get memory(): SalesforceOrgMemory {
    return this.deps.memory;
  }

  /** The Account's field names, asked once per connector, when it reads absent own fields as empty. */
  private accountFields: Promise<Set<string>> | null = null;

  /** One describe per connector (it is made for a preview's batch): fields created since are seen next time. */
  withAbsentFieldsEmpty(): SalesforceConnector {
    return new SalesforceConnector(this.api, { ...this.deps, absentFieldsEmpty: true }, this.priority);
  }

  /** The same org and usage reading, with calls marked urgent (webhook-driven) or background (backfill). */
  withPriority(priority: Priority): SalesforceConnector {
    return priority === this.priority ? this : new SalesforceConnector(this.api, this.deps, priority);
  }

  apiUsage(): ApiUsage | null {
    return this.api.usage.snapshot();
  }

  /** Whether the integration user can read every Account (read-access.ts). */
  readAccess(): Promise<ReadAccess> {
    return accountReadAccess(this.api);
  }

  /** `Organization.IsSandbox`: a sandbox org is for testing; anything else is production. */
  async environment(): Promise<CrmEnvironment> {
    const [row] = await this.queryAllPages('SELECT IsSandbox FROM Organization', 'organization kind');
    return organizationRowSchema.safeParse(row).data?.IsSandbox === true ? 'test' : 'production';
  }

  private queryUrl(soql: string, all = false): string {
    return `/${all ? 'queryAll' : 'query'}?q=${encodeURIComponent(soql)}`;
  }

  private async query(soql: string, label: string, all = false): Promise<QueryResult> {
    const raw = await this.api.rest<unknown>(this.priority, { method: 'GET', url: this.queryUrl(soql, all) });
    return parseQueryResult(raw, label);
  }

  private async queryMore(nextRecordsUrl: string, label: string): Promise<QueryResult> {
    const raw = await this.api.rest<unknown>(this.priority, { method: 'GET', url: nextRecordsUrl });
    return parseQueryResult(raw, label);
  }

  /** Every row of a query, following `nextRecordsUrl`; for result sets known to be small. */
  private async queryAllPages(soql: string, label: string, all = false): Promise<unknown[]> {
    let page = await this.query(soql, label, all);
    const rows = [...page.records];
    while (!page.done && page.nextRecordsUrl) {
      page = await this.queryMore(page.nextRecordsUrl, label);
      rows.push(...page.records);
    }
    return rows;
  }

  /**
   * A SELECT of Accounts with the fields this org has; in an org with Person Accounts, people are left out
   * (`IsPersonAccount = false`): company reports are never matched against them.
   */
  private async selectAccounts(
    where: string,
    orderBy: string,
    options: { changes?: boolean } = {},
  ): Promise<string> {
    const orgKey = `${this.deps.installation.id}|${this.deps.installation.instanceUrl ?? ''}`;
    const shape = await accountShape(this.api, this.priority, this.memory.shapes, orgKey);
    let selected = accountSelectFields({ ...options, countryCodes: shape.countryCodes });
    if (this.deps.absentFieldsEmpty) {
      this.accountFields ??= accountFieldNames(this.api, this.priority);
      const present = await this.accountFields;
      selected = selected.filter((f) => !OWN_FIELDS.has(f) || present.has(f));
    }
    const filters = [
      ...(where ? [shape.personAccounts ? `(${where})` : where] : []),
      ...(shape.personAccounts ? [`${PERSON_ACCOUNT_FIELD} = false`] : []),
    ];
    return `SELECT ${selected.join(', ')} FROM ${ACCOUNT_SOBJECT}${filters.length > 0 ? ` WHERE ${filters.join(' AND ')}` : ''}${orderBy ? ` ORDER BY ${orderBy}` : ''}`;
  }

  async listCompanies(cursor: string | null): Promise<Page<CompanyRecord>> {
    let page: QueryResult;
    if (cursor === null) {
      page = await this.query(await this.selectAccounts('', 'Id'), 'list accounts');
    } else {
      const position = decodeListCursor(cursor);
      try {
        page = await this.queryMore(position.l, 'list accounts');
      } catch (err) {
        if (!isLocatorExpired(err)) throw err;
        this.deps.logger?.info(
          { installation: this.deps.installation.id },
          'query locator expired; continuing by Id',
        );
        page = await this.query(
          await this.selectAccounts(`Id > ${soqlQuote(position.a)}`, 'Id'),
          'list accounts',
        );
      }
    }
    const records = page.records.map((r) => toCompanyRecord(accountRowSchema.parse(r)));
    const last = records.at(-1);
    const nextCursor =
      !page.done && page.nextRecordsUrl && last
        ? encodeListCursor({ l: page.nextRecordsUrl, a: last.id })
        : null;
    return { records, nextCursor };
  }

  async readCompanies(ids: string[]): Promise<CompanyRecord[]> {
    // Anything that is not a Salesforce id cannot name an Account: it is left out, never put into SOQL.
    const wanted = [...new Set(ids.filter(isSalesforceId).map(toId18))];
    const byId = new Map<string, CompanyRecord>();
    for (let i = 0; i < wanted.length; i += this.limits.readBatchSize) {
      const chunk = wanted.slice(i, i + this.limits.readBatchSize);
      const rows = await this.queryAllPages(
        await this.selectAccounts(`Id IN ${soqlIdList(chunk)}`, ''),
        'read accounts',
      );
      for (const row of rows) {
        const record = toCompanyRecord(accountRowSchema.parse(row));
        byId.set(toId18(record.id), record);
      }
    }
    return wanted.map((id) => byId.get(id)).filter((r): r is CompanyRecord => r !== undefined);
  }

  async findBySlug(slug: string): Promise<CompanyRecord[]> {
    const where = `${salesforceField('slug').salesforce} = ${soqlQuote(slug)}`;
    const rows = await this.queryAllPages(await this.selectAccounts(where, 'Id'), 'find accounts by slug');
    return rows.map((r) => toCompanyRecord(accountRowSchema.parse(r)));
  }

  /** Bounded by LIMIT (at most 2,000, one page of a query). */
  async findByName(query: string, limit: number): Promise<CompanyRecord[]> {
    const needle = query.trim();
    if (needle === '' || limit <= 0) return [];
    const soql = `${await this.selectAccounts(`Name LIKE ${soqlLikeContains(needle)}`, 'Id')} LIMIT ${Math.min(Math.floor(limit), 2000)}`;
    const rows = await this.queryAllPages(soql, 'find accounts by name');
    return rows.map((r) => toCompanyRecord(accountRowSchema.parse(r)));
  }

  async writeCompanies(updates: RecordUpdate[]): Promise<WriteResult[]> {
    const results: WriteResult[] = [];
    for (let i = 0; i < updates.length; i += this.limits.writeBatchSize) {
      results.push(...(await this.writeCollection(updates.slice(i, i + this.limits.writeBatchSize))));
    }
    return results;
  }

  /**
   * An alert as a closed Task on the Account, in the org's own closed status (task-status.ts); the `api` scope
   * covers it (no further OAuth scope). A status renamed since it was read is read again once.
   */
  async createActivity(recordId: string, activity: RecordActivity): Promise<void> {
    if (!isSalesforceId(recordId))
      throw new CrmBadRequestError(`${recordId} is not a Salesforce id`, SALESFORCE_PROVIDER, 400);
    const key = this.deps.installation.id;
    const create = async () =>
      this.api.rest<unknown>(this.priority, {
        method: 'POST',
        url: '/sobjects/Task',
        body: {
          WhatId: toId18(recordId),
          Subject: taskSubject(activity),
          Description: taskDescription(activity),
          ActivityDate: activity.at.slice(0, 10),
          Status: await closedTaskStatus(this.api, this.priority, this.memory.closedStatuses, key),
        },
      });
    try {
      await create();
    } catch (err) {
      if (!isRefusedPicklistValue(err)) throw err;
      this.memory.closedStatuses.forget(key);
      await create();
    }
  }

  /** Bulk API 2.0 for large backfill batches: one job, polled until done, one result per update in order. */
  async writeCompaniesBulk(updates: RecordUpdate[]): Promise<WriteResult[]> {
    const prepared = prepareUpdates(updates);
    const sendable = prepared.filter((p): p is PreparedOk => p.ok);
    const outcomes =
      sendable.length > 0
        ? await writeAccountsBulk(
            this.api,
            this.priority,
            sendable.map((p) => ({ id: p.id, fields: p.fields })),
            this.deps.bulk,
            this.deps.logger,
          )
        : new Map<string, BulkOutcome>();
    const results = prepared.map((p): WriteResult => {
      if (!p.ok) return p.result;
      const outcome = outcomes.get(p.id);
      if (!outcome) {
        return {
          id: p.original,
          ok: false,
          error: { code: 'RETRYABLE', message: 'the bulk job did not report this record' },
        };
      }
      return outcome.ok ? { id: p.original, ok: true } : { id: p.original, ok: false, error: outcome.error };
    });
    return this.withMergeTargets(results);
  }

  private async writeCollection(updates: RecordUpdate[]): Promise<WriteResult[]> {
    const prepared = prepareUpdates(updates);
    const sendable = prepared.filter((p): p is PreparedOk => p.ok);
    const answers = new Map<PreparedOk, WriteResult>();
    if (sendable.length > 0) {
      const raw = await this.api.rest<unknown>(this.priority, {
        method: 'PATCH',
        url: '/composite/sobjects',
        body: {
          allOrNone: false,
          records: sendable.map((p) => ({ attributes: { type: ACCOUNT_SOBJECT }, id: p.id, ...p.fields })),
        },
      });
      const parsed = collectionResultSchema.safeParse(raw);
      if (!parsed.success || parsed.data.length !== sendable.length) {
        throw new CrmBadRequestError(
          `Salesforce answered the collection update with ${parsed.success ? `${parsed.data.length} results for ${sendable.length} records` : 'an unexpected body'}`,
          SALESFORCE_PROVIDER,
          200,
        );
      }
      parsed.data.forEach((answer, i) => {
        const p = sendable[i]!;
        answers.set(
          p,
          answer.success
            ? { id: p.original, ok: true }
            : { id: p.original, ok: false, error: toRecordError(answer.errors) },
        );
      });
    }
    const results = prepared.map((p) => (p.ok ? answers.get(p)! : p.result));
    return this.withMergeTargets(results);
  }

  /**
   * Which of `recordIds` were merged away, and into which Account: a deleted Account that was merged away keeps
   * `MasterRecordId` in the recycle bin, so one queryAll (per read batch) finds them, before the change poll
   * does. Keyed by the 18-character id.
   */
  async survivorsOf(recordIds: readonly string[]): Promise<Map<string, string>> {
    const ids = [...new Set(recordIds.filter(isSalesforceId).map(toId18))];
    const out = new Map<string, string>();
    for (let i = 0; i < ids.length; i += this.limits.readBatchSize) {
      const rows = await this.queryAllPages(
        `SELECT Id, MasterRecordId FROM ${ACCOUNT_SOBJECT} WHERE Id IN ${soqlIdList(ids.slice(i, i + this.limits.readBatchSize))} AND IsDeleted = true`,
        'find merge survivors',
        true,
      );
      for (const row of rows.map((r) => mergedRowSchema.parse(r))) {
        if (row.MasterRecordId) out.set(toId18(row.Id), toId18(row.MasterRecordId));
      }
    }
    return out;
  }

  /**
   * A deleted Account that was merged away keeps `MasterRecordId` in the recycle bin: one queryAll finds the
   * survivor so the pipeline can move the link instead of dropping it.
   */
  private async withMergeTargets(results: WriteResult[]): Promise<WriteResult[]> {
    const deleted = results.filter(
      (r) => !r.ok && r.error.providerCode === ERROR_CODES.entityIsDeleted && isSalesforceId(r.id),
    );
    if (deleted.length === 0) return results;
    const ids = [...new Set(deleted.map((r) => toId18(r.id)))].slice(0, this.limits.readBatchSize);
    let masters: Map<string, string>;
    try {
      masters = await this.survivorsOf(ids);
    } catch (err) {
      // The writes themselves are done; the lookup failure travels in the record errors instead of failing them.
      const reason = err instanceof Error ? err.message : String(err);
      return results.map((r) =>
        !r.ok && r.error.providerCode === ERROR_CODES.entityIsDeleted
          ? {
              ...r,
              error: {
                ...r.error,
                message: `${r.error.message}; whether it was merged is unknown (${reason})`,
              },
            }
          : r,
      );
    }
    return results.map((r) => {
      if (r.ok || r.error.providerCode !== ERROR_CODES.entityIsDeleted || !isSalesforceId(r.id)) return r;
      const master = masters.get(toId18(r.id));
      return master
        ? {
            ...r,
            error: { ...r.error, message: `the Account was merged into ${master}`, mergedInto: master },
          }
        : r;
    });
  }

  async ensureFields(): Promise<EnsureFieldsResult> {
    return ensureSalesforceFields(this.api, {
      logger: this.deps.logger,
      changeEvents: this.deps.config.salesforce.changeEvents,
    });
  }

  /**
   * Accounts modified after the cursor, oldest first, from seconds that are over (see CHANGE_POLL). A null
   * cursor is the baseline: no records, and a cursor at the server's "now", so a poll started at install does
   * not replay the whole org. An empty answer may still move the cursor forward, to keep the next query small.
   *
   * The query runs through queryAll, so a deletion (which stamps the record) comes back in the same poll as
   * `deleted`, and the loser of a merge as `merged` into its `MasterRecordId`, with the slug it carried. Records
   * purged from the recycle bin before a poll saw them are caught by the delete log
   * (`sobjects/Account/deleted`), read at most once per CHANGE_POLL.deletedLogEveryMs. Calls per poll: one
   * queryAll (plus a queryMore per 2,000 changes) and at most one delete-log read. When the log does not
   * cover the saved position (a poll paused longer than the log's window, an emptied recycle bin), the answer
   * says `resync`: the caller lists every record to learn which are gone (delete-log.ts).
   */
  async listChangedSince(
    cursor: string | null,
  ): Promise<{ records: ChangedRecord[]; cursor: string; changes: CrmChange[]; resync?: true }> {
    if (cursor === null) return this.changeBaseline();
    const from = decodeChangeCursor(cursor);
    const { records, changes, gone, last, horizon } = await this.readChangedAccounts(from);
    let next: ChangeCursor = { ...from };
    if (last) next = { ...next, s: last.s, i: last.i };
    else if (horizon > Date.parse(from.s)) next = { ...next, s: new Date(horizon).toISOString(), i: '' };
    const log = await pollDeleteLog(this.api, this.priority, from, horizon);
    for (const id of log.ids) {
      if (!gone.has(toId18(id))) changes.push({ kind: 'deleted', recordId: id });
    }
    next.d = log.d;
    if (log.e) next.e = log.e;
    if (log.gap) {
      this.warnDeleteLogGap(from, log);
      return { records, changes, cursor: encodeChangeCursor(next), resync: true };
    }
    return { records, changes, cursor: encodeChangeCursor(next) };
  }

  /** No records, and a cursor at the server's "now": a poll started at install does not replay the org. */
  private async changeBaseline(): Promise<{
    records: ChangedRecord[];
    cursor: string;
    changes: CrmChange[];
  }> {
    const { horizon } = await this.queryWithHorizon(
      `SELECT Id FROM ${ACCOUNT_SOBJECT} ORDER BY SystemModstamp DESC LIMIT 1`,
      'change baseline',
    );
    const at = new Date(horizon).toISOString();
    return { records: [], changes: [], cursor: encodeChangeCursor({ s: at, i: '', d: at }) };
  }

  /** The queryAll pages after the cursor, up to the poll's cap, stopping at a second that may still grow. */
  private async readChangedAccounts(from: ChangeCursor): Promise<ChangedRows & { horizon: number }> {
    const soql = await this.selectAccounts(changedSinceWhere(from), 'SystemModstamp, Id', { changes: true });
    const max = this.deps.maxChangesPerPoll ?? CHANGE_POLL.maxChangesPerPoll;
    const taken: ChangedRows = { records: [], changes: [], gone: new Set<string>(), last: null };
    const first = await this.queryWithHorizon(soql, 'poll changed accounts', true);
    let page = first.page;
    for (;;) {
      const unsettled = takeChangedRows(page.records, from, first.horizon, taken);
      if (
        unsettled ||
        page.done ||
        !page.nextRecordsUrl ||
        taken.records.length + taken.changes.length >= max
      )
        break;
      page = await this.queryMore(page.nextRecordsUrl, 'poll changed accounts');
    }
    return { ...taken, horizon: first.horizon };
  }

  private warnDeleteLogGap(from: ChangeCursor, log: DeleteLogStep): void {
    this.deps.logger?.warn(
      {
        installation: this.deps.installation.id,
        deletedLogFrom: from.d ?? from.s,
        now: log.d,
        reason: log.reason,
      },
      log.reason === 'id-limit'
        ? 'the delete log holds more ids than Salesforce answers for, even in a two-minute span: records deleted meanwhile are found by listing'
        : 'the delete log does not cover the poll position: records deleted meanwhile are found by listing',
    );
  }

  /** A query and the moment before which its records are final: the server's clock less the settle time. */
  private async queryWithHorizon(
    soql: string,
    label: string,
    all = false,
  ): Promise<{ page: QueryResult; horizon: number }> {
    let serverTime = Number.NaN;
    const raw = await this.api.rest<unknown>(
      this.priority,
      { method: 'GET', url: this.queryUrl(soql, all) },
      (headers) => {
        serverTime = Date.parse(headers.date ?? '');
      },
    );
    // Without a Date header (a proxy that strips it), our own clock stands in.
    const now = Number.isNaN(serverTime) ? Date.now() : serverTime;
    const settle = this.deps.changeSettleMs ?? CHANGE_POLL.settleMs;
    return { page: parseQueryResult(raw, label), horizon: Math.floor(now / 1000) * 1000 - settle };
  }
}

function parseQueryResult(raw: unknown, label: string): QueryResult {
  const parsed = queryResultSchema.safeParse(raw);
  if (!parsed.success) {
    throw new CrmBadRequestError(
      `Salesforce answered "${label}" with an unexpected body`,
      SALESFORCE_PROVIDER,
      200,
      {
        cause: parsed.error,
      },
    );
  }
  return parsed.data;
}

function isLocatorExpired(err: unknown): boolean {
  const cause = err instanceof Error ? err.cause : undefined;
  return describeFailure(cause ?? err)?.code === ERROR_CODES.invalidQueryLocator;
}

export function createSalesforceConnector(deps: SalesforceConnectorDeps): SalesforceConnector {
  const instanceUrl = deps.installation.instanceUrl;
  if (!instanceUrl) {
    throw new CrmBadRequestError(
      `installation ${deps.installation.id} has no Salesforce instance URL: reconnect it`,
      SALESFORCE_PROVIDER,
    );
  }
  // The API base comes from a token answer: it is sent the access token on every call, so it is Salesforce's.
  const refused = salesforceHostProblem(instanceUrl, hostPolicyOf(deps.config));
  if (refused) {
    throw new CrmBadRequestError(
      `installation ${deps.installation.id} has the instance URL ${instanceUrl}, which is refused: ${refused}`,
      SALESFORCE_PROVIDER,
    );
  }
  const memory = deps.memory ?? new SalesforceOrgMemory(deps.config.salesforce.usagePauseShare, deps.usage);
  const api = new SalesforceApi({
    instanceUrl,
    apiVersion: deps.config.salesforce.apiVersion,
    tokens: deps.tokens,
    gate: deps.gate,
    usage: memory.usage,
    ...(deps.onUsage ? { onUsage: deps.onUsage } : {}),
    ...(deps.logger ? { logger: deps.logger } : {}),
    ...(deps.retry ? { retry: deps.retry } : {}),
    ...(deps.httpOptions ? { httpOptions: deps.httpOptions } : {}),
    ...(deps.sleep ? { sleep: deps.sleep } : {}),
  });
  return new SalesforceConnector(api, { ...deps, memory });
}
