import { TimedMemo } from '../../src/util/timed-memo.js';
import { SalesforceUsageTracker } from './api/usage.js';
import type { AccountShape } from './records/account-shape.js';

/**
 * What the connectors of one org share in one application: connectors are made every few seconds, and each
 * would otherwise read the daily usage afresh, describe the Account and query the closed Task status again. The
 * provider keeps one per installation through `ConnectorInput.kept` (the runtime drops it after a day unused);
 * a connector made without one gets its own.
 */
export class SalesforceOrgMemory {
  readonly usage: SalesforceUsageTracker;
  /** The Account's shape by org (installation and instance URL), asked once an hour (records/account-shape.ts). */
  readonly shapes = new TimedMemo<AccountShape>(60 * 60_000);
  /** The closed Task status, read once an hour (records/task-status.ts). */
  readonly closedStatuses = new TimedMemo<string>(60 * 60_000);

  constructor(pauseShare: number, usage?: SalesforceUsageTracker) {
    this.usage = usage ?? new SalesforceUsageTracker({ pauseShare });
  }
}
