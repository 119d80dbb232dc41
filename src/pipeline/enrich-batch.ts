import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { CompanyRecord, CrmConnector, RecordUpdate } from '../crm/connector.js';
import type { MatchStatus } from '../fields.js';
import type { Metrics } from '../metrics.js';
import type { ReportClient } from '../reports/client.js';
import {
  ReportBadRequestError,
  ReportGraphQLError,
  ReportResponseError,
  type ReportServiceError,
  ReportUnexpectedStatusError,
} from '../reports/errors.js';
import { reportSchema } from '../reports/schemas.js';
import type { BatchJob } from './jobs.js';
import type { Keys } from './keys.js';
import { fingerprintOf, type LinkIndex, type RecordState, type ReviewItem } from './link-index.js';
import { changedValues, clearedValues, type DesiredValues, valuesForReport } from './mapping.js';
import type { MatchCandidate, MatchingStrategy, MatchOutcome } from './matching-strategy.js';
import { lockInstallationRecords } from './record-locks.js';
import { type ReadReport, ReportReader, slugChangeSeqs } from './report-reader.js';
import { type BatchResult, emptyBatchResult, MAX_ERRORS_PER_BATCH } from './runs.js';

/**
 * One batch of records, end to end: decide each record's link, read each distinct report once, compute the
 * connector's fields, skip records that would not change, write the rest in one CRM call, and record what
 * happened. Running it twice leaves the same end state: every decision is recomputed from the CRM and the
 * report service, and a write made from an older report read never lands after one made from a newer read.
 */

export interface BatchDeps {
  redis: Redis;
  keys: Keys;
  index: LinkIndex;
  matching: MatchingStrategy;
  logger: Logger;
  metrics?: Metrics;
}

export interface BatchTargets {
  connector: CrmConnector;
  client: ReportClient;
}

/** Records the CRM asked us to try again (row locks); the caller re-enqueues them. */
export interface BatchOutcome {
  result: BatchResult;
  retryRecordIds: string[];
  /**
   * Slugs whose report changed after this batch read it. The change's own update ran before these records
   * were linked and missed them; the caller updates the slug again now that they are.
   */
  staleSlugs: string[];
}

type Plan =
  | { kind: 'linked'; slug: string; autoLinked: boolean; newlyLinked: boolean }
  | { kind: 'review'; outcome: Extract<MatchOutcome, { status: 'needs_review' }> }
  | { kind: 'no_match' }
  | { kind: 'skip' }
  | { kind: 'error'; code: string; message: string };

const PER_RECORD_REPORT_ERRORS = [
  ReportResponseError,
  ReportBadRequestError,
  ReportGraphQLError,
  ReportUnexpectedStatusError,
];

function isPerRecordError(err: unknown): err is ReportServiceError {
  return PER_RECORD_REPORT_ERRORS.some((cls) => err instanceof cls);
}

export async function enrichBatch(
  deps: BatchDeps,
  targets: BatchTargets,
  job: BatchJob,
): Promise<BatchOutcome> {
  const { connector, client } = targets;
  const reader = new ReportReader(deps.redis, deps.keys, client);
  const result = emptyBatchResult();
  const retryRecordIds: string[] = [];
  const fail = (recordId: string, code: string, message: string) => {
    result.failed += 1;
    if (result.errors.length < MAX_ERRORS_PER_BATCH) result.errors.push({ recordId, code, message });
  };

  const locks = await lockInstallationRecords(deps.redis, deps.keys, job.installationId, job.recordIds);
  try {
    const records = job.records ?? (await readInChunks(connector, job.recordIds));
    const present = new Set(records.map((r) => r.id));
    const vanished = job.recordIds.filter((id) => !present.has(id));
    if (vanished.length > 0) await deps.index.forget(job.installationId, vanished);
    result.records = records.length;

    const autoLinks = await deps.index.autoLinksOf(
      job.installationId,
      records.map((r) => r.id),
    );
    const rematch = new Set(job.rematch ?? []);

    // 1. Decide each record's link.
    const plans = new Map<string, Plan>();
    const reviewItems = new Map<string, ReviewItem>();
    for (const [i, record] of records.entries()) {
      const slug = cleanSlug(record.fields.slug);
      const autoLink = autoLinks[i] ?? null;
      const ownLinkUnderReview = rematch.has(record.id) && slug !== null && slug === autoLink;
      if (slug && !ownLinkUnderReview) {
        plans.set(record.id, { kind: 'linked', slug, autoLinked: autoLink === slug, newlyLinked: false });
        continue;
      }
      const decided =
        record.fields.matchStatus === 'no_match' || record.fields.matchStatus === 'needs_review';
      if ((job.mode === 'reconcile' || (job.mode === 'incremental' && decided)) && !ownLinkUnderReview) {
        plans.set(record.id, { kind: 'skip' });
        continue;
      }
      try {
        const outcome = await match(deps, job.installationId, reader, job.runId, record);
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
          plans.set(record.id, { kind: 'no_match' });
        }
      } catch (err) {
        if (!isPerRecordError(err)) throw err;
        plans.set(record.id, { kind: 'error', code: err.code, message: err.message });
      }
    }

    // 2. Read each distinct report once.
    const fresh = new Set(job.freshSlugs ?? []);
    const reads = new Map<string, ReadReport | { kind: 'error'; code: string; message: string }>();
    for (const plan of plans.values()) {
      if (plan.kind !== 'linked' || reads.has(plan.slug)) continue;
      try {
        reads.set(plan.slug, await reader.read(plan.slug, job.runId, { fresh: fresh.has(plan.slug) }));
      } catch (err) {
        if (!isPerRecordError(err)) throw err;
        reads.set(plan.slug, { kind: 'error', code: err.code, message: err.message });
      }
    }

    // 3. Desired values and the sequence of the data they come from.
    const fallbackSeq = await reader.nextSeq();
    const desired = new Map<string, { values: DesiredValues; seq: number; state: RecordState }>();
    for (const record of records) {
      const plan = plans.get(record.id)!;
      if (plan.kind === 'skip') {
        result.skipped += 1;
        continue;
      }
      const built = desiredFor(
        record,
        plan,
        reads,
        fallbackSeq,
        deps.matching,
        reviewItems.get(record.id) ?? null,
      );
      if (plan.kind === 'error') fail(record.id, plan.code, plan.message);
      if (plan.kind === 'linked') {
        const read = reads.get(plan.slug);
        if (read?.kind === 'error') fail(record.id, read.code, read.message);
        if (plan.newlyLinked) result.linked += 1;
      }
      desired.set(record.id, built);
    }

    // 4. Drop what is stale or unchanged.
    const ids = [...desired.keys()];
    const written = await deps.index.writtenSeqs(job.installationId, ids);
    const updates: RecordUpdate[] = [];
    const byId = new Map(records.map((r) => [r.id, r]));
    const states: RecordState[] = [];
    const seqs = new Map<string, number>();
    const now = new Date().toISOString();
    ids.forEach((id, i) => {
      const d = desired.get(id)!;
      const record = byId.get(id)!;
      if ((written[i] ?? 0) > d.seq) {
        // A fresher report was already written to this record; this batch's data is older.
        result.skipped += 1;
        return;
      }
      const changes = changedValues(record.fields, d.values);
      result.statuses[(d.values.matchStatus ?? record.fields.matchStatus ?? 'error') as MatchStatus] += 1;
      if (Object.keys(changes).length === 0) {
        result.unchanged += 1;
        states.push(d.state);
        seqs.set(id, d.seq);
        return;
      }
      updates.push({ id, values: { ...changes, syncedAt: now } });
    });
    if (states.length > 0) {
      await deps.index.apply(job.installationId, states);
      await deps.index.setWrittenSeqs(job.installationId, seqs);
    }

    // 5. Write in the CRM's batch size (or its bulk API for a large batch); each result belongs to its record.
    const bulk =
      connector.writeCompaniesBulk &&
      connector.bulkThreshold !== undefined &&
      updates.length >= connector.bulkThreshold;
    const chunkSize = bulk ? updates.length : connector.limits.writeBatchSize;
    for (let i = 0; i < updates.length; i += chunkSize) {
      const chunk = updates.slice(i, i + chunkSize);
      const results =
        bulk && connector.writeCompaniesBulk
          ? await connector.writeCompaniesBulk(chunk)
          : await connector.writeCompanies(chunk);
      const okStates: RecordState[] = [];
      const okSeqs = new Map<string, number>();
      const gone: string[] = [];
      results.forEach((r, j) => {
        const update = chunk[j]!;
        if (r.ok) {
          result.written += 1;
          okStates.push(desired.get(update.id)!.state);
          okSeqs.set(update.id, desired.get(update.id)!.seq);
          return;
        }
        if (r.error.code === 'NOT_FOUND') {
          gone.push(update.id);
          result.skipped += 1;
        } else if (r.error.code === 'RETRYABLE') {
          retryRecordIds.push(update.id);
        } else {
          fail(update.id, r.error.providerCode ?? r.error.code, r.error.message);
        }
      });
      deps.metrics?.recordsWritten.inc({ crm: connector.kind, result: 'ok' }, okStates.length);
      if (results.length - okStates.length > 0) {
        deps.metrics?.recordsWritten.inc(
          { crm: connector.kind, result: 'failed' },
          results.length - okStates.length,
        );
      }
      await deps.index.apply(job.installationId, okStates);
      await deps.index.setWrittenSeqs(job.installationId, okSeqs);
      await deps.index.forget(job.installationId, gone);
    }
    return { result, retryRecordIds, staleSlugs: await staleSlugsOf(deps, plans, desired) };
  } finally {
    await locks.release();
  }
}

async function staleSlugsOf(
  deps: BatchDeps,
  plans: Map<string, Plan>,
  desired: Map<string, { seq: number; state: RecordState }>,
): Promise<string[]> {
  const oldest = new Map<string, number>();
  for (const [id, plan] of plans) {
    const d = desired.get(id);
    if (plan.kind !== 'linked' || !d || d.state.status === 'error') continue;
    oldest.set(plan.slug, Math.min(oldest.get(plan.slug) ?? d.seq, d.seq));
  }
  const changed = await slugChangeSeqs(deps.redis, deps.keys, [...oldest.keys()]);
  return [...oldest].filter(([slug, seq]) => (changed.get(slug) ?? 0) > seq).map(([slug]) => slug);
}

function cleanSlug(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}

async function readInChunks(connector: CrmConnector, ids: string[]): Promise<CompanyRecord[]> {
  const out: CompanyRecord[] = [];
  for (let i = 0; i < ids.length; i += connector.limits.readBatchSize) {
    out.push(...(await connector.readCompanies(ids.slice(i, i + connector.limits.readBatchSize))));
  }
  return out;
}

async function match(
  deps: BatchDeps,
  installationId: string,
  reader: ReportReader,
  runId: string | null,
  record: CompanyRecord,
): Promise<MatchOutcome> {
  const rejected = await deps.index.rejectedSlugs(installationId, record.id);
  const search = async (q: string, limit: number): Promise<MatchCandidate[]> => {
    const hits = await reader.search(q, limit, runId);
    const candidates: MatchCandidate[] = [];
    for (const hit of hits) {
      const full = reportSchema.safeParse(hit);
      // A hit that is a whole report is as good as reading it: it saves a call later in this run.
      if (full.success) await reader.remember(runId, full.data);
      let name = hit.name;
      let extra: Partial<MatchCandidate> = {};
      if (name === undefined) {
        // Summary hits (GraphQL promises only slug and score) need the report for its name.
        if (rejected.has(hit.slug)) continue;
        const read = await reader.read(hit.slug, runId);
        if (read.kind !== 'report') continue;
        name = read.report.name;
        extra = {
          industry: read.report.industry,
          geography: read.report.geography,
          stage: read.report.stage,
        };
      }
      candidates.push({
        slug: hit.slug,
        name,
        industry: hit.industry ?? null,
        geography: hit.geography ?? null,
        stage: hit.stage ?? null,
        score: typeof hit.score === 'number' ? hit.score : (hit.score?.overall ?? null),
        ...extra,
      });
    }
    return candidates;
  };
  const { outcome } = await deps.matching.find(record, search, rejected);
  return outcome;
}

function desiredFor(
  record: CompanyRecord,
  plan: Exclude<Plan, { kind: 'skip' }>,
  reads: Map<string, ReadReport | { kind: 'error'; code: string; message: string }>,
  fallbackSeq: number,
  matching: MatchingStrategy,
  review: ReviewItem | null,
): { values: DesiredValues; seq: number; state: RecordState } {
  const base = {
    recordId: record.id,
    autoLinked: false,
    unlinkedName: null,
    review: null,
    score: null,
    fingerprint: fingerprintOf(record),
  } satisfies Partial<RecordState>;
  const unlinked = (
    status: MatchStatus,
    values: DesiredValues,
  ): { values: DesiredValues; seq: number; state: RecordState } => ({
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
  if (plan.kind === 'review') {
    const values = clearedValues('needs_review');
    // A rename may have invalidated our own link: take it back.
    if (cleanSlug(record.fields.slug)) values.slug = null;
    return unlinked('needs_review', values);
  }
  if (plan.kind === 'no_match') {
    const values = clearedValues('no_match');
    if (cleanSlug(record.fields.slug)) values.slug = null;
    return unlinked('no_match', values);
  }
  const read = reads.get(plan.slug);
  const linkValue = plan.newlyLinked ? { slug: plan.slug } : {};
  const linkedState = (status: MatchStatus, score: number | null): RecordState => ({
    ...base,
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
  return {
    values: { ...linkValue, ...valuesForReport(read.report) },
    seq: read.seq,
    state: linkedState('matched', read.report.score.overall),
  };
}
