import type { CompanyRecord } from '../../crm/connector.js';
import { type LinkSource, linkSourceOf } from '../../fields.js';
import {
  ReportBadRequestError,
  ReportGraphQLError,
  ReportResponseError,
  type ReportServiceError,
  ReportUnexpectedStatusError,
} from '../../reports/errors.js';
import type { LinkIndex } from '../../storage/link-index.js';
import type { ReviewItem } from '../../storage/review-codec.js';
import type { BatchJob } from '../batch-job.js';
import type { MatchOutcome } from '../matching-strategy.js';
import { firstOriginOf, matchesWaiting, type RecordAsk, recordAsks } from './origin.js';

/** What the batch does with one record, decided before any report is read. */
export type Plan =
  | { kind: 'linked'; slug: string; source: LinkSource; autoLinked: boolean; newlyLinked: boolean }
  /** A person or an admin decided the record has no report: `no_match`, never matched again. */
  | { kind: 'held'; source: HoldSource }
  | { kind: 'review'; outcome: Extract<MatchOutcome, { status: 'needs_review' }> }
  | { kind: 'no_match' }
  /** Waits for a report requested from the service (no published report matches yet). */
  | { kind: 'requested' }
  /** Left as it is; `moved`: the record no longer holds the slug its batch was asked to take back. */
  | { kind: 'skip'; moved?: true }
  | { kind: 'error'; code: string; message: string };

export interface Plans {
  plans: Map<string, Plan>;
  /** The review item of each record left `needs_review`. */
  reviewItems: Map<string, ReviewItem>;
}

export type HoldSource = Extract<LinkSource, 'person' | 'admin'>;

/** Statuses that say the record held a link when it was last written. */
const LINKED_STATUSES: readonly unknown[] = ['matched', 'not_published', 'error'];

/**
 * Who made the link of a record that has a slug. The record's `report_link_source` says, except that a
 * slug a person set over the connector's own link still carries `auto` until we write it: the change event
 * (a `person-set` ask, batch/origin.ts) or the index's memory of our own link tells that apart. A record from before the field
 * existed is ours exactly when the index remembers linking it.
 */
function sourceOfLink(
  record: CompanyRecord,
  slug: string,
  autoLink: string | null,
  personSet: boolean,
): LinkSource {
  if (personSet) return 'person';
  const written = linkSourceOf(record.fields.linkSource);
  if (written === 'auto') return autoLink !== null && autoLink !== slug ? 'person' : 'auto';
  if (written) return written;
  return autoLink === slug ? 'auto' : 'person';
}

/**
 * The decision a record without a slug carries, if any. A record whose status still says linked but whose
 * slug is gone was cleared by a person (the connector clears the source with every slug it takes back): that
 * is the person's decision. A `no_match` that a person or an admin made stays theirs.
 */
function holdOf(record: CompanyRecord): HoldSource | null {
  const written = linkSourceOf(record.fields.linkSource);
  if (written === null) return null;
  if (LINKED_STATUSES.includes(record.fields.matchStatus)) return 'person';
  if (record.fields.matchStatus === 'no_match' && (written === 'person' || written === 'admin')) {
    return written;
  }
  return null;
}

/** Matches one record (search for candidates, then decide); see candidate-search.ts. */
export type MatchRecord = (record: CompanyRecord) => Promise<MatchOutcome>;

/**
 * Judges the report published for a record's own request (matching's `judgeRequested`): `matched` or
 * `needs_review`; null when the report cannot be read as published.
 */
export type JudgeRequested = (record: CompanyRecord, slug: string) => Promise<MatchOutcome | null>;

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
 * renamed (a `rematch-own` ask); a record without one is matched, unless the mode says to leave it as it is.
 */
export async function planLinks(
  index: LinkIndex,
  job: BatchJob,
  records: CompanyRecord[],
  matchRecord: MatchRecord,
  /** Records with a pending report request (requests/request-store.ts). */
  waiting: ReadonlySet<string> = new Set(),
  judgeRequested: JudgeRequested = async () => null,
): Promise<Plans> {
  const autoLinks = await index.autoLinksOf(
    job.installationId,
    records.map((r) => r.id),
  );
  const askOf = recordAsks(job);
  const batch: BatchPlanning = {
    job,
    matchRecord,
    waiting,
    judgeRequested,
    matchWaiting: matchesWaiting(job),
    reportPublished: firstOriginOf(job).kind === 'report-published',
  };
  const plans = new Map<string, Plan>();
  const reviewItems = new Map<string, ReviewItem>();
  for (const [i, record] of records.entries()) {
    const plan = await planRecord(record, autoLinks[i] ?? null, askOf(record.id), batch);
    plans.set(record.id, plan);
    if (plan.kind === 'review') reviewItems.set(record.id, reviewItemOf(record, plan.outcome));
  }
  return { plans, reviewItems };
}

/** What planning one record needs to know of its batch. */
interface BatchPlanning {
  job: BatchJob;
  matchRecord: MatchRecord;
  waiting: ReadonlySet<string>;
  judgeRequested: JudgeRequested;
  /** Whether a waiting record is matched in this batch (origin.ts's matchesWaiting). */
  matchWaiting: boolean;
  /** Whether the batch comes from the publication of a report. */
  reportPublished: boolean;
}

type ReviewOutcome = Extract<MatchOutcome, { status: 'needs_review' }>;

/** The review queue's item of a record left `needs_review`. */
function reviewItemOf(record: CompanyRecord, outcome: ReviewOutcome): ReviewItem {
  return {
    recordId: record.id,
    name: record.name,
    country: record.country,
    industry: record.industry,
    candidates: outcome.candidates,
    at: new Date().toISOString(),
  };
}

/** One record's plan: what its batch's origin asks for it first, then its own slug, decision and matching. */
async function planRecord(
  record: CompanyRecord,
  autoLink: string | null,
  ask: RecordAsk,
  batch: BatchPlanning,
): Promise<Plan> {
  const slug = cleanSlug(record.fields.slug);
  if (ask.kind === 'admin-unlink') {
    // Read now, under the record's lock or just before it (a record written meanwhile is planned again).
    if (ask.from !== undefined && slug !== ask.from) return { kind: 'skip', moved: true };
    return { kind: 'held', source: 'admin' };
  }
  if (ask.kind === 'restore') return restoredPlan(ask.link, slug);
  if (ask.kind === 'admin-link') {
    // The admin's decision on the review queue: their link, whatever matching would say.
    return {
      kind: 'linked',
      slug: ask.slug,
      source: 'admin',
      autoLinked: false,
      newlyLinked: ask.slug !== slug,
    };
  }
  if (ask.kind === 'request-link' && !slug) return planPublishedRequest(record, ask.slug, batch);
  return planOwnLink(record, slug, autoLink, ask, batch);
}

/** An undo puts back exactly what the record had: its slug and who made it, or its decision not to link. */
function restoredPlan(link: Extract<RecordAsk, { kind: 'restore' }>['link'], slug: string | null): Plan {
  if (link.slug) {
    const source = link.source ?? 'auto';
    return {
      kind: 'linked',
      slug: link.slug,
      source,
      autoLinked: source === 'auto',
      newlyLinked: link.slug !== slug,
    };
  }
  if (link.source === 'person' || link.source === 'admin') return { kind: 'held', source: link.source };
  if (link.candidates && link.candidates.length > 0) {
    return {
      kind: 'review',
      outcome: { status: 'needs_review', candidates: link.candidates, reason: 'restored by an undo' },
    };
  }
  return { kind: 'no_match' };
}

/**
 * The service published the report this record asked for: the request's link where matching accepts the
 * report as the record's, else a person decides with that report as a candidate. A report that cannot be read
 * is not linked: a waiting record waits on.
 */
async function planPublishedRequest(
  record: CompanyRecord,
  slug: string,
  batch: BatchPlanning,
): Promise<Plan> {
  try {
    const judged = await batch.judgeRequested(record, slug);
    if (judged?.status === 'matched') {
      return { kind: 'linked', slug, source: 'request', autoLinked: false, newlyLinked: true };
    }
    if (judged?.status === 'needs_review') return { kind: 'review', outcome: judged };
    return batch.waiting.has(record.id) ? { kind: 'requested' } : { kind: 'skip' };
  } catch (err) {
    if (!isPerRecordError(err)) throw err;
    return { kind: 'error', code: err.code, message: err.message };
  }
}

/**
 * A record's plan from its own fields: the slug it holds (unless our own link is asked to be decided again),
 * a decision held on it, a request it waits on, or, where the batch's mode matches it, matching.
 */
async function planOwnLink(
  record: CompanyRecord,
  slug: string | null,
  autoLink: string | null,
  ask: RecordAsk,
  batch: BatchPlanning,
): Promise<Plan> {
  const { job } = batch;
  const source = slug ? sourceOfLink(record, slug, autoLink, ask.kind === 'person-set') : null;
  const ownLinkUnderReview = ask.kind === 'rematch-own' && source === 'auto';
  if (slug && source && !ownLinkUnderReview) {
    return { kind: 'linked', slug, source, autoLinked: source === 'auto', newlyLinked: false };
  }
  const released = ask.kind === 'release';
  const hold = slug || released ? null : holdOf(record);
  if (hold) return { kind: 'held', source: hold };
  const isWaiting = batch.waiting.has(record.id);
  if (isWaiting && !batch.matchWaiting && !ownLinkUnderReview) return { kind: 'requested' };
  const decided =
    record.fields.matchStatus === 'no_match' ||
    record.fields.matchStatus === 'needs_review' ||
    record.fields.matchStatus === 'requested';
  const asked = ownLinkUnderReview || released;
  if ((job.mode === 'reconcile' || (job.mode === 'incremental' && decided)) && !asked)
    return { kind: 'skip' };
  try {
    const outcome = await batch.matchRecord(record);
    if (outcome.status === 'matched') {
      return {
        kind: 'linked',
        slug: outcome.slug,
        source: 'auto',
        autoLinked: true,
        newlyLinked: outcome.slug !== slug,
      };
    }
    if (outcome.status === 'needs_review' && !(isWaiting && batch.reportPublished)) {
      // Another company's publication is no answer to a request: a waiting record leaves `requested` for a
      // link matching is sure of or for its own report (above), never for a candidate to review.
      return { kind: 'review', outcome };
    }
    return isWaiting ? { kind: 'requested' } : { kind: 'no_match' };
  } catch (err) {
    if (!isPerRecordError(err)) throw err;
    return { kind: 'error', code: err.code, message: err.message };
  }
}
