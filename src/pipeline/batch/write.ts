import { setTimeout as sleep } from 'node:timers/promises';
import type { CompanyRecord, CrmConnector, RecordUpdate, WriteResult } from '../../crm/connector.js';
import type { ValueGrain } from '../../crm/value-grain.js';
import { MATCH_STATUSES, type MatchStatus } from '../../fields.js';
import type { Metrics } from '../../metrics.js';
import { RETRY_BUDGET } from '../../retry-budget.js';
import type { LinkIndex } from '../../storage/link-index.js';
import { RecordLocksLostError } from '../../storage/record-locks.js';
import type { RecordState } from '../../storage/record-state.js';
import { changedValues } from '../mapping.js';
import type { Desired } from './desired-values.js';
import type { BatchTally } from './tally.js';

/**
 * Step 4: drops what is stale (a fresher report was already written to the record) or unchanged (its index
 * state is kept now, as nothing will be written); returns the updates left to write. A dry run (a preview)
 * counts the same and keeps nothing.
 */
export async function keepChanged(
  index: LinkIndex,
  installationId: string,
  records: CompanyRecord[],
  desired: Map<string, Desired>,
  tally: BatchTally,
  /** The CRM's `limits.valueGrain`: what counts as unchanged. */
  grain: ValueGrain,
  options: { dryRun?: boolean } = {},
): Promise<RecordUpdate[]> {
  const { result } = tally;
  const ids = [...desired.keys()];
  const written = await index.writtenSeqs(installationId, ids);
  const byId = new Map(records.map((r) => [r.id, r]));
  const updates: RecordUpdate[] = [];
  const states: RecordState[] = [];
  const seqs = new Map<string, number>();
  const now = new Date().toISOString();
  ids.forEach((id, i) => {
    const d = desired.get(id);
    const record = byId.get(id);
    if (!d || !record) return;
    if ((written[i] ?? 0) > d.seq) {
      // A fresher report was already written to this record; this batch's data is older.
      result.skipped += 1;
      return;
    }
    const changes = changedValues(record.fields, d.values, grain);
    result.statuses[statusIn(d.values.matchStatus) ?? statusIn(record.fields.matchStatus) ?? 'error'] += 1;
    if (Object.keys(changes).length === 0) {
      result.unchanged += 1;
      states.push(d.state);
      seqs.set(id, d.seq);
      return;
    }
    updates.push({ id, values: { ...changes, syncedAt: now } });
  });
  if (states.length > 0 && !options.dryRun) {
    await index.apply(installationId, states);
    await index.setWrittenSeqs(installationId, seqs);
  }
  return updates;
}

/**
 * Step 5: writes in the CRM's batch size (or its bulk API for a large batch); each result belongs to its
 * record: written (index updated), gone (forgotten), failed, or to try again. A record the CRM asks to try
 * again (a row lock) goes to the back of this batch's queue and rides in a later write call of the same
 * batch, after a short wait: it costs no call of its own where the batch has room, and no second read of its
 * report. What is still refused after `inBatchAttempts` goes back to the caller (`retryRecordIds`).
 */
export async function writeUpdates(
  context: {
    index: LinkIndex;
    connector: CrmConnector;
    installationId: string;
    metrics?: Metrics;
    /** Replaced in tests so the wait before a resend costs no wall time. */
    sleep?: (ms: number) => Promise<void>;
    /** Whether the batch still holds its records' locks; checked before each write call. */
    held?: () => boolean;
  },
  updates: RecordUpdate[],
  desired: Map<string, Desired>,
  tally: BatchTally,
): Promise<void> {
  const { index, connector, installationId, metrics } = context;
  const pause = context.sleep ?? ((ms: number) => sleep(ms));
  const queue = [...updates];
  const resends: Resends = { refused: new Map(), at: 0 };
  while (queue.length > 0) {
    // A lapsed lease (the holder stalled past it) lets another holder write these records meanwhile: what is
    // left was compared against a state that may be gone, so it is not written from here.
    if (context.held && !context.held()) throw new RecordLocksLostError(queue.length);
    const { chunk, bulk } = takeWriteCall(connector, queue);
    if (chunk.some((u) => resends.refused.has(u.id))) {
      const wait = resends.at - Date.now();
      if (wait > 0) await pause(wait);
    }
    const results =
      bulk && connector.writeCompaniesBulk
        ? await connector.writeCompaniesBulk(chunk)
        : await connector.writeCompanies(chunk);
    const { okStates, okSeqs, gone } = sortWriteResults(chunk, results, desired, tally, queue, resends);
    metrics?.recordsWritten.inc({ crm: connector.kind, result: 'ok' }, okStates.length);
    if (results.length - okStates.length > 0) {
      metrics?.recordsWritten.inc(
        { crm: connector.kind, result: 'failed' },
        results.length - okStates.length,
      );
    }
    await index.apply(installationId, okStates);
    await index.setWrittenSeqs(installationId, okSeqs);
    await index.forget(installationId, gone);
  }
}

/** The records answered "try again" within one batch, and when the next resend may go. */
interface Resends {
  /** Sends of each record answered "try again" so far. */
  refused: Map<string, number>;
  /** Epoch ms before which no resend goes out. */
  at: number;
}

/** The next write call's records, taken off the front of the queue: all of them for the bulk API. */
function takeWriteCall(
  connector: CrmConnector,
  queue: RecordUpdate[],
): { chunk: RecordUpdate[]; bulk: boolean } {
  const bulk =
    connector.writeCompaniesBulk !== undefined &&
    connector.bulkThreshold !== undefined &&
    queue.length >= connector.bulkThreshold;
  const chunk = queue.splice(0, bulk ? queue.length : connector.limits.writeBatchSize);
  return { chunk, bulk };
}

/**
 * Gives each result of a write call to its record: written (returned to keep in the index), gone (returned to
 * forget), refused for now (back on the queue, or to the caller past `inBatchAttempts`), or failed.
 */
function sortWriteResults(
  chunk: RecordUpdate[],
  results: WriteResult[],
  desired: Map<string, Desired>,
  tally: BatchTally,
  queue: RecordUpdate[],
  resends: Resends,
): { okStates: RecordState[]; okSeqs: Map<string, number>; gone: string[] } {
  const { result } = tally;
  const { inBatchAttempts, inBatchDelayMs } = RETRY_BUDGET.recordRetry;
  const okStates: RecordState[] = [];
  const okSeqs = new Map<string, number>();
  const gone: string[] = [];
  results.forEach((r, j) => {
    const update = chunk[j];
    const d = update ? desired.get(update.id) : undefined;
    if (!update || !d) return;
    if (r.ok) {
      result.written += 1;
      okStates.push(d.state);
      okSeqs.set(update.id, d.seq);
      return;
    }
    if (r.error.code === 'NOT_FOUND') {
      gone.push(update.id);
      result.skipped += 1;
    } else if (r.error.code === 'RETRYABLE') {
      const sends = (resends.refused.get(update.id) ?? 0) + 1;
      resends.refused.set(update.id, sends);
      if (sends <= inBatchAttempts) {
        queue.push(update);
        resends.at = Math.max(resends.at, Date.now() + inBatchDelayMs * 2 ** (sends - 1));
      } else {
        tally.retryRecordIds.push(update.id);
      }
    } else {
      tally.fail(update.id, r.error.providerCode ?? r.error.code, r.error.message);
    }
  });
  return { okStates, okSeqs, gone };
}

function statusIn(value: unknown): MatchStatus | null {
  return MATCH_STATUSES.find((s) => s === value) ?? null;
}
