/**
 * Salesforce record ids: 15 case-sensitive characters, or 18 with a 3-character suffix that encodes the case of
 * the first 15 (so the id survives case-insensitive systems). Ids are checked before they go anywhere near a
 * SOQL statement.
 */

const SUFFIX_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ012345';
const ID15 = /^[a-zA-Z0-9]{15}$/;
const ID18 = /^[a-zA-Z0-9]{18}$/;

function checksum(id15: string): string {
  let suffix = '';
  for (let chunk = 0; chunk < 3; chunk++) {
    let bits = 0;
    for (let i = 0; i < 5; i++) {
      const c = id15.charCodeAt(chunk * 5 + i);
      if (c >= 65 && c <= 90) bits |= 1 << i;
    }
    suffix += SUFFIX_ALPHABET[bits];
  }
  return suffix;
}

export function isSalesforceId(value: string): boolean {
  if (ID15.test(value)) return true;
  if (!ID18.test(value)) return false;
  return checksum(value.slice(0, 15)) === value.slice(15).toUpperCase();
}

/** The 18-character form; throws for anything that is not a Salesforce id. */
export function toId18(value: string): string {
  if (!isSalesforceId(value)) throw new Error(`not a Salesforce id: ${JSON.stringify(value)}`);
  return value.length === 18 ? value.slice(0, 15) + value.slice(15).toUpperCase() : value + checksum(value);
}
