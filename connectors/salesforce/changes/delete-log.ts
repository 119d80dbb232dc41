import { z } from 'zod';
import { CrmBadRequestError } from '../../../src/crm/errors.js';
import type { Priority, SalesforceApi } from '../api/api-client.js';
import { describeFailure } from '../errors.js';
import { CHANGE_POLL, DELETE_LOG, DELETED_LOG_PATH, SALESFORCE_PROVIDER } from '../provider.js';
import { normalizeDateTime } from '../records/records.js';
import type { ChangeCursor } from './cursors.js';

/**
 * The change poll's read of Salesforce's delete log (`sobjects/Account/deleted`), within the rules in
 * DELETE_LOG: the start is kept inside the window the org answers for (the `earliestDateAvailable` it last
 * reported, and never older than the retention), a read goes out only when start and end are more than a
 * minute apart with seconds dropped, and a start the org refuses anyway (INVALID_REPLICATION_DATE, e.g. the
 * recycle bin was emptied since) resets the position to now. A span holding more ids than Salesforce answers
 * for (EXCEEDED_ID_LIMIT) is halved until a read succeeds, and the next poll goes on from where that read
 * stopped; a span that cannot be halved further is skipped. Each of those losses of deletions in between sets
 * `gap` (with `reason`), and the caller has to list every record to learn which are gone.
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
  /** Why deletions may have been missed, when `gap` is set. */
  reason?: DeleteLogGapReason;
}

export type DeleteLogGapReason =
  /** The saved position lies before the window the org answers for (a long pause). */
  | 'outside-window'
  /** The org's log now starts after the position (the recycle bin was emptied meanwhile). */
  | 'purged'
  /** The org refused the start (INVALID_REPLICATION_DATE). */
  | 'start-refused'
  /** More than the org's id limit in a span that cannot be narrowed further (EXCEEDED_ID_LIMIT). */
  | 'id-limit';

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
  const outside = gap ? { reason: 'outside-window' as const } : {};
  const startMinute = minute(Date.parse(start));
  if (minute(horizon) - startMinute < Math.max(DELETE_LOG.minSpanMs, CHANGE_POLL.deletedLogEveryMs)) {
    return { ids: [], d: start, ...kept, gap, ...outside };
  }
  // The span read: the whole of it first, halved (on minute marks) while the org finds too many ids in it.
  let end = horizon;
  for (let narrowings = 0; ; narrowings++) {
    try {
      const log = await readDeleteLog(api, priority, start, end);
      const purgedSince = log.earliest !== null && Date.parse(log.earliest) > startMinute;
      return {
        ids: log.ids,
        d: log.coveredUntil,
        ...(log.earliest !== null ? { e: log.earliest } : kept),
        gap: gap || purgedSince,
        ...(gap ? outside : purgedSince ? { reason: 'purged' as const } : {}),
      };
    } catch (err) {
      const codes = failureCodes(err);
      if (codes.includes(DELETE_LOG.replicationDateError)) {
        return { ids: [], d: new Date(horizon).toISOString(), ...kept, gap: true, reason: 'start-refused' };
      }
      if (!codes.includes(DELETE_LOG.idLimitError)) throw err;
      const half = minute(startMinute + (minute(end) - startMinute) / 2);
      if (narrowings >= DELETE_LOG.maxNarrowings || half - startMinute < DELETE_LOG.minSpanMs) {
        // Past the position, as far as the poll has settled: the listing the gap asks for finds what is gone.
        return { ids: [], d: new Date(horizon).toISOString(), ...kept, gap: true, reason: 'id-limit' };
      }
      end = half;
    }
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

/** Salesforce's error codes for a failed read, on the error and on its cause. */
function failureCodes(err: unknown): (string | undefined)[] {
  const cause = err instanceof Error ? err.cause : undefined;
  return [describeFailure(cause ?? err)?.code, describeFailure(err)?.code];
}
