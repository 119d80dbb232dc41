import { z } from 'zod';
import { CrmBadRequestError } from '../../src/crm/errors.js';
import type { Priority, SalesforceApi } from './api-client.js';
import type { ChangeCursor } from './cursors.js';
import { describeFailure } from './errors.js';
import { CHANGE_POLL, DELETE_LOG, DELETED_LOG_PATH, SALESFORCE_PROVIDER } from './provider.js';
import { normalizeDateTime } from './records.js';

/**
 * The change poll's read of Salesforce's delete log (`sobjects/Account/deleted`), within the rules in
 * DELETE_LOG: the start is kept inside the window the org answers for (the `earliestDateAvailable` it last
 * reported, and never older than the retention), a read goes out only when start and end are at least a minute
 * apart with seconds dropped, and a start the org refuses anyway (INVALID_REPLICATION_DATE, e.g. the recycle bin
 * was emptied since) resets the position to now. Each of those three loses deletions in between: `gap` says
 * so, and the caller has to list every record to learn which are gone.
 */

const deletedLogSchema = z.object({
  deletedRecords: z.array(z.object({ id: z.string(), deletedDate: z.string().optional() })).default([]),
  earliestDateAvailable: z.string().nullish(),
  latestDateCovered: z.string().nullish(),
});

export interface DeleteLogStep {
  /** Accounts the log says were deleted in the span read. */
  ids: string[];
  /** Where the next read starts (the cursor's `d`). */
  d: string;
  /** Where the org last said its log starts (the cursor's `e`). */
  e?: string;
  /** Deletions may have been missed: the caller must list every record to find the ones gone. */
  gap: boolean;
}

const minute = (ms: number) => Math.floor(ms / 60_000) * 60_000;

/** One step of the delete log for a poll whose settled horizon is `horizon` (ms). */
export async function pollDeleteLog(
  api: SalesforceApi,
  priority: Priority,
  cursor: Pick<ChangeCursor, 's' | 'd' | 'e'>,
  horizon: number,
): Promise<DeleteLogStep> {
  const savedAt = cursor.d ?? cursor.s;
  const since = Date.parse(savedAt);
  const floor = Math.max(
    cursor.e ? Date.parse(cursor.e) : Number.NEGATIVE_INFINITY,
    horizon - DELETE_LOG.retentionMs + DELETE_LOG.edgeMarginMs,
  );
  const gap = floor > since;
  const start = gap ? new Date(floor).toISOString() : savedAt;
  const kept = cursor.e ? { e: cursor.e } : {};
  const span = minute(horizon) - minute(Date.parse(start));
  if (span < Math.max(DELETE_LOG.minSpanMs, CHANGE_POLL.deletedLogEveryMs)) {
    return { ids: [], d: start, ...kept, gap };
  }
  try {
    const log = await readDeleteLog(api, priority, start, horizon);
    const purgedSince = log.earliest !== null && Date.parse(log.earliest) > minute(Date.parse(start));
    return {
      ids: log.ids,
      d: log.coveredUntil,
      ...(log.earliest !== null ? { e: log.earliest } : kept),
      gap: gap || purgedSince,
    };
  } catch (err) {
    if (!isReplicationDateRefused(err)) throw err;
    return { ids: [], d: new Date(horizon).toISOString(), ...kept, gap: true };
  }
}

/** Ids in the delete log between two moments, how far the log was covered, and where the org says it starts. */
async function readDeleteLog(
  api: SalesforceApi,
  priority: Priority,
  start: string,
  end: number,
): Promise<{ ids: string[]; coveredUntil: string; earliest: string | null }> {
  const query = `start=${encodeURIComponent(start)}&end=${encodeURIComponent(new Date(end).toISOString())}`;
  const raw = await api.rest<unknown>(priority, { method: 'GET', url: `${DELETED_LOG_PATH}?${query}` });
  const parsed = deletedLogSchema.safeParse(raw);
  if (!parsed.success) {
    throw new CrmBadRequestError(
      'Salesforce answered the delete log with an unexpected body',
      SALESFORCE_PROVIDER,
      200,
      { cause: parsed.error },
    );
  }
  const covered = parsed.data.latestDateCovered ? normalizeDateTime(parsed.data.latestDateCovered) : null;
  const earliest = parsed.data.earliestDateAvailable
    ? normalizeDateTime(parsed.data.earliestDateAvailable)
    : null;
  return {
    ids: parsed.data.deletedRecords.map((r) => r.id),
    // Salesforce says to start the next call from here; without it, nothing past `start` is assumed covered.
    coveredUntil: covered ?? start,
    earliest,
  };
}

function isReplicationDateRefused(err: unknown): boolean {
  const cause = err instanceof Error ? err.cause : undefined;
  return (
    describeFailure(cause ?? err)?.code === DELETE_LOG.replicationDateError ||
    describeFailure(err)?.code === DELETE_LOG.replicationDateError
  );
}
