import { toId18 } from '../records/ids.js';

/** Ids the way Salesforce shapes them: a 3-character key prefix, then base-62 digits, then the case suffix. */

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export const KEY_PREFIX = {
  account: '001',
  user: '005',
  organization: '00D',
  permissionSet: '0PS',
  permissionSetAssignment: '0Pa',
  bulkJob: '750',
  queryLocator: '01g',
  task: '00T',
  taskStatus: '01J',
} as const;

export class IdFactory {
  private counter = 0;

  /** Ascending ids: ASCII order of the base-62 alphabet matches numeric order, like ORDER BY Id. */
  next(prefix: string): string {
    this.counter++;
    let n = this.counter;
    let digits = '';
    while (n > 0) {
      digits = BASE62[n % 62] + digits;
      n = Math.floor(n / 62);
    }
    return toId18(`${prefix}5g${digits.padStart(10, '0')}`);
  }
}
