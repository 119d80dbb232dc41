import { isSalesforceId, toId18 } from '../records/ids.js';

/**
 * SOQL literals. Every value that reaches a statement goes through one of these: strings are quoted with
 * backslash escapes, date-times are formatted to the one unquoted form SOQL accepts, ids are checked first.
 */

/**
 * A SOQL string literal. SOQL escapes with a backslash; besides the quote and the backslash itself, line breaks
 * and tabs are escaped so a value can never end the statement's line or hide a clause.
 */
export function soqlQuote(value: string): string {
  let out = "'";
  for (const ch of value) {
    switch (ch) {
      case '\\':
        out += '\\\\';
        break;
      case "'":
        out += "\\'";
        break;
      case '\n':
        out += '\\n';
        break;
      case '\r':
        out += '\\r';
        break;
      case '\t':
        out += '\\t';
        break;
      default:
        out += ch;
    }
  }
  return `${out}'`;
}

/**
 * A LIKE literal matching values that contain `value` anywhere. `\%` and `\_` are escapes of the literal itself
 * in SOQL, so a `%` or `_` typed by the admin is written so and matches itself. A backslash is escaped twice, once
 * for the literal and once for LIKE, else a trailing one would escape the closing wildcard. Quotes and line
 * breaks are escaped as in any literal (soqlQuote).
 */
export function soqlLikeContains(value: string): string {
  let out = "'%";
  for (const ch of value) {
    if (ch === '%' || ch === '_') out += `\\${ch}`;
    else if (ch === '\\') out += '\\\\\\\\';
    else out += soqlQuote(ch).slice(1, -1);
  }
  return `${out}%'`;
}

/** `YYYY-MM-DDThh:mm:ssZ` in UTC: SOQL date-time literals are unquoted and carry no fractional seconds. */
export function soqlDateTime(value: Date | string): string {
  const date = typeof value === 'string' ? new Date(value) : value;
  if (Number.isNaN(date.getTime())) throw new Error(`not a date-time: ${JSON.stringify(String(value))}`);
  return `${date.toISOString().slice(0, 19)}Z`;
}

/** `('id1','id2')` from ids already known to be valid; throws otherwise (callers filter first). */
export function soqlIdList(ids: readonly string[]): string {
  if (ids.length === 0) throw new Error('an IN list needs at least one id');
  return `(${ids.map((id) => soqlQuote(toId18(id))).join(',')})`;
}

export { isSalesforceId };
