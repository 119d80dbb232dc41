import { z } from 'zod';
import type { RecordError } from '../../../src/crm/connector.js';
import { CrmBadRequestError, CrmTransientError } from '../../../src/crm/errors.js';
import type { Logger } from '../../../src/log.js';
import { toRecordError } from '../errors.js';
import { SALESFORCE_FIELDS } from '../fields/field-names.js';
import { ACCOUNT_SOBJECT, BULK_DEFAULTS, BULK_NULL_VALUE, SALESFORCE_PROVIDER } from '../provider.js';
import { toId18 } from '../records/ids.js';
import type { Priority, SalesforceApi } from './api-client.js';

/**
 * Bulk API 2.0 `update` of Accounts: one ingest job with the updates as CSV, polled until Salesforce finishes,
 * then the successful, failed and unprocessed rows read back. Each step is its own gated call, so a refused
 * session or a REQUEST_LIMIT_EXCEEDED retries that step, not the whole job.
 *
 * CSV cells: empty leaves a field as it is, `#N/A` sets it to null, numbers as received, date-times as ISO 8601.
 */

export interface BulkOptions {
  pollIntervalMs: number;
  pollTimeoutMs: number;
}

export interface BulkRow {
  id: string;
  fields: Record<string, string | number | null>;
}

export type BulkOutcome = { ok: true } | { ok: false; error: RecordError };

const jobInfoSchema = z.object({ id: z.string(), state: z.string(), errorMessage: z.string().nullish() });
const resultRowSchema = z.record(z.string(), z.unknown());

function csvCell(value: string | number | null | undefined): string {
  if (value === undefined) return '';
  if (value === null || value === '') return BULK_NULL_VALUE;
  const text = String(value);
  return /[",\r\n]/.test(text) || text !== text.trim() ? `"${text.replaceAll('"', '""')}"` : text;
}

/** Columns in FIELDS order so two runs with the same updates produce the same file. */
export function bulkCsv(rows: readonly BulkRow[]): string {
  const used = new Set(rows.flatMap((r) => Object.keys(r.fields)));
  const columns = SALESFORCE_FIELDS.map((f) => f.salesforce).filter((name) => used.has(name));
  const lines = [['Id', ...columns].join(',')];
  for (const row of rows) lines.push([row.id, ...columns.map((c) => csvCell(row.fields[c]))].join(','));
  return `${lines.join('\n')}\n`;
}

/** `CODE:message:fields` as Bulk API 2.0 writes it into `sf__Error`. */
export function parseBulkError(text: string): { statusCode: string; message: string; fields: string[] } {
  const m = /^([A-Z_]+):(.*?)(?::([^:]*))?$/s.exec(text.trim());
  if (!m) return { statusCode: 'UNKNOWN', message: text, fields: [] };
  const fields = (m[3] ?? '')
    .split(/[;,]/)
    .map((f) => f.trim())
    .filter((f) => f !== '' && f !== '--');
  return { statusCode: m[1]!, message: m[2]!.trim(), fields };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * `PATCH jobs/ingest/<id>` with state Aborted (Bulk API 2.0 "Abort a Job": Salesforce does not process an
 * aborted job). True when Salesforce took it; false when it refused (a job that completed meanwhile).
 */
async function abortJob(
  api: SalesforceApi,
  priority: Priority,
  jobPath: string,
  logger?: Logger,
): Promise<boolean> {
  try {
    await api.run(priority, 'bulk: abort job', (conn) =>
      conn.request({
        method: 'PATCH',
        url: jobPath,
        body: JSON.stringify({ state: 'Aborted' }),
        headers: { 'content-type': 'application/json' },
      }),
    );
    return true;
  } catch (err) {
    logger?.warn({ err, job: jobPath }, 'salesforce bulk job could not be aborted');
    return false;
  }
}

type IngestJob = ReturnType<SalesforceApi['conn']['bulk2']['createJob']>;

export async function writeAccountsBulk(
  api: SalesforceApi,
  priority: Priority,
  rows: readonly BulkRow[],
  options: Partial<BulkOptions> = {},
  logger?: Logger,
): Promise<Map<string, BulkOutcome>> {
  const pollIntervalMs = options.pollIntervalMs ?? BULK_DEFAULTS.pollIntervalMs;
  const pollTimeoutMs = options.pollTimeoutMs ?? BULK_DEFAULTS.pollTimeoutMs;
  const job = api.conn.bulk2.createJob({ object: ACCOUNT_SOBJECT, operation: 'update', lineEnding: 'LF' });

  const opened = jobInfoSchema.parse(await api.run(priority, 'bulk: open job', () => job.open()));
  const jobPath = `/services/data/v${api.apiVersion}/jobs/ingest/${opened.id}`;
  const csv = bulkCsv(rows);
  await api.run(priority, 'bulk: upload', (conn) =>
    conn.request({
      method: 'PUT',
      url: `${jobPath}/batches`,
      body: csv,
      headers: { 'content-type': 'text/csv' },
    }),
  );
  await api.run(priority, 'bulk: close job', () => job.close());

  await waitForJobComplete(api, priority, job, jobPath, { pollIntervalMs, pollTimeoutMs }, logger);

  const [succeeded, failed, unprocessed] = await Promise.all([
    api.run(priority, 'bulk: successful results', () => job.getSuccessfulResults()),
    api.run(priority, 'bulk: failed results', () => job.getFailedResults()),
    api.run(priority, 'bulk: unprocessed records', () => job.getUnprocessedRecords()),
  ]);

  const outcomes = outcomesOfResults(succeeded, failed, unprocessed);
  logger?.info(
    { job: opened.id, records: rows.length, failed: failed.length, unprocessed: unprocessed.length },
    'salesforce bulk update finished',
  );
  return outcomes;
}

/**
 * Polls the closed job until Salesforce completes it. A failed or aborted job is a bad request; one still
 * running at the timeout is aborted (left running, it could still apply its rows after the batch was handed
 * back for a retry) and is a transient error, unless the abort is refused because the job completed meanwhile.
 */
async function waitForJobComplete(
  api: SalesforceApi,
  priority: Priority,
  job: IngestJob,
  jobPath: string,
  { pollIntervalMs, pollTimeoutMs }: BulkOptions,
  logger?: Logger,
): Promise<void> {
  const deadline = Date.now() + pollTimeoutMs;
  for (;;) {
    const info = jobInfoSchema.parse(await api.run(priority, 'bulk: check job', () => job.check()));
    if (info.state === 'JobComplete') return;
    if (info.state === 'Failed' || info.state === 'Aborted') {
      throw new CrmBadRequestError(
        `Salesforce bulk job ${info.id} ended ${info.state}: ${info.errorMessage ?? 'no reason given'}`,
        SALESFORCE_PROVIDER,
      );
    }
    if (Date.now() > deadline) {
      if (await abortJob(api, priority, jobPath, logger)) {
        throw new CrmTransientError(
          `Salesforce bulk job ${info.id} was still ${info.state} after ${Math.round(pollTimeoutMs / 1000)} s and was aborted; rows it had processed stay written`,
          SALESFORCE_PROVIDER,
        );
      }
      // Refused: the job finished meanwhile, and its results are read after this.
      const last = jobInfoSchema.parse(await api.run(priority, 'bulk: check job', () => job.check()));
      if (last.state === 'JobComplete') return;
      throw new CrmTransientError(
        `Salesforce bulk job ${info.id} was still ${info.state} after ${Math.round(pollTimeoutMs / 1000)} s and could not be aborted (now ${last.state})`,
        SALESFORCE_PROVIDER,
      );
    }
    await sleep(pollIntervalMs);
  }
}

/** The three result sets as one outcome per Account Id; a record Salesforce never reached is retryable. */
function outcomesOfResults(
  succeeded: Iterable<unknown>,
  failed: Iterable<unknown>,
  unprocessed: Iterable<unknown>,
): Map<string, BulkOutcome> {
  const outcomes = new Map<string, BulkOutcome>();
  const idOf = (row: Record<string, unknown>) => {
    const raw = row.Id ?? row.sf__Id;
    return typeof raw === 'string' && raw !== '' ? toId18(raw) : null;
  };
  for (const raw of succeeded) {
    const id = idOf(resultRowSchema.parse(raw));
    if (id) outcomes.set(id, { ok: true });
  }
  for (const raw of failed) {
    const row = resultRowSchema.parse(raw);
    const id = idOf(row);
    if (!id) continue;
    outcomes.set(id, { ok: false, error: toRecordError([parseBulkError(String(row.sf__Error ?? ''))]) });
  }
  for (const raw of unprocessed) {
    const id = idOf(resultRowSchema.parse(raw));
    if (id) {
      outcomes.set(id, {
        ok: false,
        error: { code: 'RETRYABLE', message: 'the bulk job stopped before this record' },
      });
    }
  }
  return outcomes;
}
