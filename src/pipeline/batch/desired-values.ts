import type { StoredAlert } from '../../alerts/alert-store.js';
import type { CompanyRecord } from '../../crm/connector.js';
import type { ValueGrain } from '../../crm/value-grain.js';
import type { MatchStatus } from '../../fields.js';
import { fingerprintOf, type RecordState } from '../../storage/record-state.js';
import type { ReviewItem } from '../../storage/review-codec.js';
import { clearedValues, type DesiredValues, sameValue, valuesForReport } from '../mapping.js';
import type { MatchingStrategy } from '../matching-strategy.js';
import { cleanSlug, type Plan, type Plans } from './plan.js';
import type { ReportRead } from './report-reads.js';
import type { BatchTally } from './tally.js';

/** What one record should hold, the sequence of the data it comes from, and the index state to keep. */
export interface Desired {
  values: DesiredValues;
  seq: number;
  state: RecordState;
}

/**
 * Step 3: the desired values of every record not skipped. `fallbackSeq` dates values that come from no read
 * (errors, no match): taken after the reads, so they are never older than the batch's own data.
 */
export function desiredValues(
  records: CompanyRecord[],
  { plans, reviewItems }: Plans,
  reads: Map<string, ReportRead>,
  fallbackSeq: number,
  matching: MatchingStrategy,
  tally: BatchTally,
  /** The CRM's `limits.valueGrain`: whether the score changed. */
  grain: ValueGrain,
  /** The latest alert of each linked report (alerts/alert-store.ts). */
  alerts: ReadonlyMap<string, StoredAlert> = new Map(),
): Map<string, Desired> {
  const desired = new Map<string, Desired>();
  for (const record of records) {
    const plan = plans.get(record.id);
    if (!plan || plan.kind === 'skip') {
      tally.result.skipped += 1;
      continue;
    }
    const built = desiredFor(
      record,
      plan,
      reads,
      fallbackSeq,
      matching,
      reviewItems.get(record.id) ?? null,
      alerts,
      grain,
    );
    if (plan.kind === 'error') tally.fail(record.id, plan.code, plan.message);
    if (plan.kind === 'linked') {
      const read = reads.get(plan.slug);
      if (read?.kind === 'error') tally.fail(record.id, read.code, read.message);
      if (plan.newlyLinked) tally.result.linked += 1;
    }
    desired.set(record.id, built);
  }
  return desired;
}

function desiredFor(
  record: CompanyRecord,
  plan: Exclude<Plan, { kind: 'skip' }>,
  reads: Map<string, ReportRead>,
  fallbackSeq: number,
  matching: MatchingStrategy,
  review: ReviewItem | null,
  alerts: ReadonlyMap<string, StoredAlert>,
  grain: ValueGrain,
): Desired {
  if (plan.kind === 'linked') {
    return desiredLinked(record, plan, reads.get(plan.slug), fallbackSeq, alerts, grain);
  }
  return desiredUnlinked(record, plan, fallbackSeq, matching, review);
}

/** The index state every record starts from: no link kept by us, no review, no score. */
function baseState(record: CompanyRecord) {
  return {
    recordId: record.id,
    autoLinked: false,
    unlinkedName: null,
    review: null,
    score: null,
    fingerprint: fingerprintOf(record),
  } satisfies Partial<RecordState>;
}

/** A record left without a report: an error, a held decision, a review, no match or a requested report. */
function desiredUnlinked(
  record: CompanyRecord,
  plan: Exclude<Plan, { kind: 'skip' | 'linked' }>,
  fallbackSeq: number,
  matching: MatchingStrategy,
  review: ReviewItem | null,
): Desired {
  const base = baseState(record);
  const unlinked = (status: MatchStatus, values: DesiredValues): Desired => ({
    values,
    seq: fallbackSeq,
    state: {
      ...base,
      slug: null,
      status,
      unlinkedName: record.name ? matching.normalizeName(record.name) : null,
      review,
      fingerprint: fingerprintOf({ ...record, fields: { slug: values.slug ?? record.fields.slug } }),
    },
  });

  if (plan.kind === 'error') {
    return {
      values: { matchStatus: 'error' },
      seq: fallbackSeq,
      state: { ...base, slug: cleanSlug(record.fields.slug), status: 'error' },
    };
  }
  if (plan.kind === 'held') {
    // The decision is the person's or the admin's: no name to match a new report against.
    const values: DesiredValues = { ...clearedValues('no_match'), linkSource: plan.source };
    if (cleanSlug(record.fields.slug)) values.slug = null;
    const held = unlinked('no_match', values);
    return { ...held, state: { ...held.state, unlinkedName: null, review: null } };
  }
  if (plan.kind === 'review') {
    const values: DesiredValues = { ...clearedValues('needs_review'), linkSource: null };
    // A rename may have invalidated our own link: take it back.
    if (cleanSlug(record.fields.slug)) values.slug = null;
    return unlinked('needs_review', values);
  }
  const values: DesiredValues = { ...clearedValues(plan.kind), linkSource: null };
  if (cleanSlug(record.fields.slug)) values.slug = null;
  return unlinked(plan.kind, values);
}

/** A record linked to a report: its values come from the report's read (or say why there are none). */
function desiredLinked(
  record: CompanyRecord,
  plan: Extract<Plan, { kind: 'linked' }>,
  read: ReportRead | undefined,
  fallbackSeq: number,
  alerts: ReadonlyMap<string, StoredAlert>,
  grain: ValueGrain,
): Desired {
  const linkValue: DesiredValues = {
    ...(plan.newlyLinked ? { slug: plan.slug } : {}),
    linkSource: plan.source,
  };
  const linkedState = (status: MatchStatus, score: number | null): RecordState => ({
    ...baseState(record),
    slug: plan.slug,
    status,
    score,
    autoLinked: plan.autoLinked,
    place: { domain: record.domain, country: record.country },
    fingerprint: fingerprintOf({ ...record, fields: { slug: plan.slug } }),
  });
  if (!read || read.kind === 'error') {
    return {
      values: { ...linkValue, matchStatus: 'error' },
      seq: fallbackSeq,
      state: linkedState('error', null),
    };
  }
  if (read.kind === 'not_published') {
    return {
      values: { ...linkValue, ...clearedValues('not_published') },
      seq: read.seq,
      state: linkedState('not_published', null),
    };
  }
  const alert = alerts.get(plan.slug);
  return {
    values: {
      ...linkValue,
      ...valuesForReport(read.report),
      alert: alert?.line ?? null,
      alertAt: alert?.at ?? null,
      ...previousScore(record, read.report.score.overall, grain),
    },
    seq: read.seq,
    state: linkedState('matched', read.report.score.overall),
  };
}

/** The score the record held before this one, kept when the score changes (workflows compare the two). */
function previousScore(record: CompanyRecord, next: number, grain: ValueGrain): DesiredValues {
  const current = record.fields.score;
  if (current === null || current === undefined || current === '') return {};
  if (sameValue('score', current, next, grain)) return {};
  return { scorePrevious: typeof current === 'number' ? current : Number(current) };
}
