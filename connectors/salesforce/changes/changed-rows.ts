import type { ChangedRecord, CrmChange } from '../../../src/crm/connector.js';
import { soqlDateTime, soqlQuote } from '../api/soql.js';
import { toId18 } from '../records/ids.js';
import { changedAccountRowSchema, toChangedRecord } from '../records/records.js';
import type { ChangeCursor } from './cursors.js';

/** What a change poll has taken so far from the queryAll pages. */
export interface ChangedRows {
  records: ChangedRecord[];
  changes: CrmChange[];
  /** The 18-character ids deleted or merged away, so the delete log does not report them twice. */
  gone: Set<string>;
  /** The last row taken: where the next poll resumes. */
  last: { s: string; i: string } | null;
}

/** Rows after the cursor: strictly after its stamp, or at its stamp with a greater Id when it names one. */
export function changedSinceWhere(from: ChangeCursor): string {
  const literal = soqlDateTime(from.s);
  return from.i
    ? `SystemModstamp > ${literal} OR (SystemModstamp = ${literal} AND Id > ${soqlQuote(from.i)})`
    : `SystemModstamp >= ${literal}`;
}

/**
 * Takes one page's rows into `into`, live records apart from deletions and merges. True when it met a row at
 * or past the horizon: ordered by stamp, everything from there on is in a second that may still grow.
 */
export function takeChangedRows(
  rows: readonly unknown[],
  from: ChangeCursor,
  horizon: number,
  into: ChangedRows,
): boolean {
  const fromMs = Date.parse(from.s);
  for (const raw of rows) {
    const row = changedAccountRowSchema.parse(raw);
    const record = toChangedRecord(row);
    const at = Date.parse(record.modifiedAt);
    if (at >= horizon) return true;
    // The literal has whole seconds; a stamp with milliseconds could come back once more. Drop repeats.
    if (at < fromMs || (at === fromMs && from.i !== '' && toId18(record.id) === toId18(from.i))) continue;
    into.last = { s: record.modifiedAt, i: record.id };
    if (row.IsDeleted) {
      into.gone.add(toId18(record.id));
      into.changes.push(
        row.MasterRecordId
          ? {
              kind: 'merged',
              recordId: record.id,
              mergedInto: row.MasterRecordId,
              mergedIds: [record.id],
              mergedSlug: typeof record.fields.slug === 'string' ? record.fields.slug : null,
            }
          : { kind: 'deleted', recordId: record.id },
      );
    } else {
      into.records.push(record);
    }
  }
  return false;
}
