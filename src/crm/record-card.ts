import type { DecisionActor } from '../decisions/decision-log.js';
import type { Installation } from '../installations/store.js';
import type { ReportRequest } from '../requests/request-store.js';
import type { ReviewItem } from '../storage/review-codec.js';
import type { CompanyRecord, CrmKind } from './connector.js';

/**
 * What a CRM's record card (an app card on the record) may read and do through the application: one record as the
 * CRM holds it now, with its review item and report request, and the same review decisions and report
 * requests the admin page makes. A provider's card routes reach the application only through this.
 */

/** One record as the card shows it. */
export interface RecordCardSource {
  record: CompanyRecord;
  review: ReviewItem | null;
  request: ReportRequest | null;
}

/** A seller's review decision from the card: one of the offered candidates, or none of them. */
export type RecordCardDecision = { action: 'accept'; slug: string } | { action: 'reject' };

/** Why a card's decision or request was not done (nothing was changed); `status` is the HTTP answer. */
export class RecordCardError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'RecordCardError';
  }
}

export interface RecordCardHost {
  /** The installation of the CRM account the CRM knows as `externalId` (a portal, an org); null when none. */
  installationOf(crm: CrmKind, externalId: string): Promise<Installation | null>;
  /** The record as the CRM holds it now; null when the installation's CRM has no such record. */
  read(installationId: string, recordId: string): Promise<RecordCardSource | null>;
  /** Written to the CRM and logged with `by` before it resolves; throws RecordCardError when refused. */
  decide(
    installationId: string,
    recordId: string,
    decision: RecordCardDecision,
    by: DecisionActor,
  ): Promise<void>;
  /** Asks the report service for a report on the record, logged with `by`; throws RecordCardError when refused. */
  request(installationId: string, recordId: string, by: DecisionActor): Promise<void>;
}
