import type { RecordUpdate, WriteResult } from '../../../src/crm/connector.js';
import { isSalesforceId, toId18 } from './ids.js';
import { FieldValueError, toSalesforceFields } from './records.js';

export type PreparedOk = {
  ok: true;
  original: string;
  id: string;
  fields: Record<string, string | number | null>;
};
export type Prepared = PreparedOk | { ok: false; result: WriteResult };

/** Checks ids and converts values up front, so a bad record fails alone and never reaches Salesforce. */
export function prepareUpdates(updates: RecordUpdate[]): Prepared[] {
  return updates.map((u): Prepared => {
    if (!isSalesforceId(u.id)) {
      return {
        ok: false,
        result: {
          id: u.id,
          ok: false,
          error: { code: 'NOT_FOUND', message: `${JSON.stringify(u.id)} is not a Salesforce id` },
        },
      };
    }
    try {
      return { ok: true, original: u.id, id: toId18(u.id), fields: toSalesforceFields(u.values) };
    } catch (err) {
      if (!(err instanceof FieldValueError)) throw err;
      return {
        ok: false,
        result: { id: u.id, ok: false, error: { code: 'INVALID_VALUE', message: err.message } },
      };
    }
  });
}
