import type { CompanyRecord } from '../../crm/connector.js';
import {
  ReportBadRequestError,
  ReportGraphQLError,
  ReportResponseError,
  type ReportServiceError,
  ReportUnexpectedStatusError,
} from '../../reports/errors.js';
import type { BatchJob } from '../jobs.js';
import type { LinkIndex, ReviewItem } from '../link-index.js';
import type { MatchOutcome } from '../matching-strategy.js';

/** What the batch does with one record, decided before any report is read. */
export type Plan =
  | { kind: 'linked'; slug: string; autoLinked: boolean; newlyLinked: boolean }
  | { kind: 'review'; outcome: Extract<MatchOutcome, { status: 'needs_review' }> }
  | { kind: 'no_match' }
  /** Waits for a report requested from the service (no published report matches yet). */
  | { kind: 'requested' }
  | { kind: 'skip' }
  | { kind: 'error'; code: string; message: string };

export interface Plans {
  plans: Map<string, Plan>;
  /** The review item of each record left `needs_review`. */
  reviewItems: Map<string, ReviewItem>;
}

/** Matches one record (search for candidates, then decide); see candidate-search.ts. */
export type MatchRecord = (record: CompanyRecord) => Promise<MatchOutcome>;

const PER_RECORD_REPORT_ERRORS = [
  ReportResponseError,
  ReportBadRequestError,
  ReportGraphQLError,
  ReportUnexpectedStatusError,
];

/** A report-service failure that belongs to one record (or slug), not to the whole batch. */
export function isPerRecordError(err: unknown): err is ReportServiceError {
  return PER_RECORD_REPORT_ERRORS.some((cls) => err instanceof cls);
}

export function cleanSlug(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}

/**
 * Step 1: each record's link. A record with a slug keeps it, unless it is our own link and the record was
 * renamed (`rematch`); a record without one is matched, unless the mode says to leave it as it is.
 */
export async function planLinks(
  index: LinkIndex,
  job: BatchJob,
  records: CompanyRecord[],
  matchRecord: MatchRecord,
  /** Records with a pending report request (requests/request-store.ts). */
  waiting: ReadonlySet<string> = new Set(),
): Promise<Plans> {
  const autoLinks = await index.autoLinksOf(
    job.installationId,
    records.map((r) => r.id),
  );
  const rematch = new Set(job.rematch ?? []);
  const links = job.links ?? {};
  // A waiting record is searched again only when a report was published or a full run asks for it; any other
  // batch keeps it `requested` without spending a search.
  const matchWaiting = job.matchRequested === true || (job.runId !== null && job.mode === 'full');
  const plans = new Map<string, Plan>();
  const reviewItems = new Map<string, ReviewItem>();
  for (const [i, record] of records.entries()) {
    const slug = cleanSlug(record.fields.slug);
    const autoLink = autoLinks[i] ?? null;
    const ownLinkUnderReview = rematch.has(record.id) && slug !== null && slug === autoLink;
    const requestedSlug = links[record.id];
    if (requestedSlug && !slug) {
      // The service published the report this record asked for: linked as a person's link would be.
      plans.set(record.id, { kind: 'linked', slug: requestedSlug, autoLinked: false, newlyLinked: true });
      continue;
    }
    if (slug && !ownLinkUnderReview) {
      plans.set(record.id, { kind: 'linked', slug, autoLinked: autoLink === slug, newlyLinked: false });
      continue;
    }
    const isWaiting = waiting.has(record.id);
    if (isWaiting && !matchWaiting && !ownLinkUnderReview) {
      plans.set(record.id, { kind: 'requested' });
      continue;
    }
    const decided =
      record.fields.matchStatus === 'no_match' ||
      record.fields.matchStatus === 'needs_review' ||
      record.fields.matchStatus === 'requested';
    if ((job.mode === 'reconcile' || (job.mode === 'incremental' && decided)) && !ownLinkUnderReview) {
      plans.set(record.id, { kind: 'skip' });
      continue;
    }
    try {
      const outcome = await matchRecord(record);
      if (outcome.status === 'matched') {
        plans.set(record.id, {
          kind: 'linked',
          slug: outcome.slug,
          autoLinked: true,
          newlyLinked: outcome.slug !== slug,
        });
      } else if (outcome.status === 'needs_review') {
        plans.set(record.id, { kind: 'review', outcome });
        reviewItems.set(record.id, {
          recordId: record.id,
          name: record.name,
          country: record.country,
          industry: record.industry,
          candidates: outcome.candidates,
          at: new Date().toISOString(),
        });
      } else {
        plans.set(record.id, isWaiting ? { kind: 'requested' } : { kind: 'no_match' });
      }
    } catch (err) {
      if (!isPerRecordError(err)) throw err;
      plans.set(record.id, { kind: 'error', code: err.code, message: err.message });
    }
  }
  return { plans, reviewItems };
}
