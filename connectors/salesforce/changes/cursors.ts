import { z } from 'zod';
import { CrmBadRequestError } from '../../../src/crm/errors.js';
import { SALESFORCE_PROVIDER } from '../provider.js';

/**
 * Cursors handed to the caller, who stores them as opaque strings: base64url JSON, validated on the way back.
 *
 * A list cursor keeps the query locator (`nextRecordsUrl`) and the last Account id, so a locator that expired
 * between two jobs (Salesforce drops idle ones after about 15 minutes) is replaced by `WHERE Id > last`.
 *
 * A change cursor is the (SystemModstamp, Id) of the last record returned. Many records share one stamp (a
 * bulk update stamps thousands within a second), so the stamp alone would either repeat or skip them; the pair
 * is a strict order: `SystemModstamp > s OR (SystemModstamp = s AND Id > i)`. It also keeps how far the
 * delete log has been read (`d`).
 */

const listCursorSchema = z.object({ l: z.string().startsWith('/services/'), a: z.string().min(1) });
export type ListCursor = z.infer<typeof listCursorSchema>;

/**
 * `d`: how far the delete log has been read (its `latestDateCovered`); `e`: where the org last said its delete
 * log starts (`earliestDateAvailable`). Either may be absent (a cursor of an earlier version, or never read).
 */
const changeCursorSchema = z.object({
  s: z.iso.datetime({ offset: true }),
  i: z.string(),
  d: z.iso.datetime({ offset: true }).optional(),
  e: z.iso.datetime({ offset: true }).optional(),
});
export type ChangeCursor = z.infer<typeof changeCursorSchema>;
const isoTimestamp = z.iso.datetime({ offset: true });

function encode(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

function decode<T>(schema: z.ZodType<T>, cursor: string, what: string): T {
  try {
    return schema.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
  } catch (err) {
    throw new CrmBadRequestError(
      `not a Salesforce ${what} cursor issued by this connector`,
      SALESFORCE_PROVIDER,
      400,
      {
        cause: err,
      },
    );
  }
}

export function encodeListCursor(cursor: ListCursor): string {
  return encode(cursor);
}

export function decodeListCursor(cursor: string): ListCursor {
  return decode(listCursorSchema, cursor, 'list');
}

export function encodeChangeCursor(cursor: ChangeCursor): string {
  return encode(cursor);
}

/** Also accepts a bare ISO timestamp, for a caller that wants changes since a moment. */
export function decodeChangeCursor(cursor: string): ChangeCursor {
  if (isoTimestamp.safeParse(cursor).success) return { s: cursor, i: '' };
  return decode(changeCursorSchema, cursor, 'change');
}
