import type { Logger } from 'pino';
import type { AlertStore } from '../alerts/alert-store.js';
import type { CompanyRecord, CrmConnector } from '../crm/connector.js';
import type { Metrics } from '../metrics.js';
import type { ReportClient } from '../reports/client.js';
import type { ReportRequest, RequestStore } from '../requests/request-store.js';
import type { LinkIndex } from '../storage/link-index.js';
import type { RecordLocks } from '../storage/record-locks.js';
import type { RunLinks } from '../storage/run-links.js';
import { type BatchResult, PREVIEW_SAMPLES_PER_BATCH, type PreviewSample } from '../storage/runs.js';
import type { SlugChanges } from '../storage/slug-changes.js';
import { searchAndDecide } from './batch/candidate-search.js';
import { type Desired, desiredValues } from './batch/desired-values.js';
import { freshSlugsOf, isPreview, runIdOf } from './batch/origin.js';
import { type Plan, type Plans, planLinks } from './batch/plan.js';
import { type ReportRead, readLinkedReports, readSinceOf } from './batch/report-reads.js';
import { BatchTally } from './batch/tally.js';
import { keepChanged, writeUpdates } from './batch/write.js';
import type { BatchJob } from './batch-job.js';
import type { MatchingStrategy } from './matching-strategy.js';
import type { ReportReader, ReportReaderOptions } from './report-reader.js';
import { requestedReportJudge } from './request-completion.js';

/**
 * One batch of records, end to end, in named steps (each in ./batch/): load the records, plan each
 * record's link (searching for candidates where it has none), read each distinct report once, compute the
 * connector's fields, keep only what would change, write the rest in the CRM's batch size, and say which
 * slugs changed meanwhile. Running it twice leaves the same end state: every decision is recomputed from the
 * CRM and the report service, and a write made from an older report read never lands after one made from a
 * newer read.
 *
 * The record locks (storage/record-locks.ts) cover only the compare and write: loading, planning, searches and
 * reads come first, unlocked, so an event for one of the records never waits behind a backfill's reads.
 * Records whose stored state changed meanwhile (another holder wrote them) are read and planned again under
 * the locks, so no plan made before someone else's write is written over it.
 */

export interface BatchDeps {
  index: LinkIndex;
  /** Slugs that changed after this batch read them (staleSlugs). */
  slugChanges: Pick<SlugChanges, 'seqs'>;
  /** Held over the compare and write. */
  recordLocks: Pick<RecordLocks, 'lock'>;
  matching: MatchingStrategy;
  /** Pending report requests: such records stay `requested` until their report is published. */
  requests: RequestStore;
  /** Each report's latest alert, written with the report's other fields. */
  alerts: AlertStore;
  logger: Logger;
  metrics?: Metrics;
  /** The links each run made. */
  runLinks: RunLinks;
  /** A view of the report cache through one report key's client (report-reader.ts). */
  reportReader(client: ReportClient, options: Pick<ReportReaderOptions, 'readSince'>): ReportReader;
}

export interface BatchTargets {
  connector: CrmConnector;
  client: ReportClient;
}

export interface BatchOutcome {
  result: BatchResult;
  /** Records the CRM asked us to try again (row locks); the caller re-enqueues them. */
  retryRecordIds: string[];
  /**
   * Slugs whose report changed after this batch read it. The change's own update ran before these records
   * were linked and missed them; the caller updates the slug again now that they are.
   */
  staleSlugs: string[];
  /** Records the CRM no longer returned (deleted, or merged away before its change was seen); forgotten. */
  vanished?: string[];
  /** Records left as they are because they no longer hold the slug the batch was asked to take back. */
  slugMoved?: string[];
}

export async function enrichBatch(
  deps: BatchDeps,
  targets: BatchTargets,
  job: BatchJob,
): Promise<BatchOutcome> {
  const { connector, client } = targets;
  const { index, matching } = deps;
  const { installationId } = job;
  const runId = runIdOf(job);
  // Reads and searches go through the key's report cache, shared with every run and job: a retry, a rerun or
  // the next sync reads nothing the service has not said changed since (report-reader.ts).
  const reader = deps.reportReader(client, { readSince: readSinceOf(job) });
  const tally = new BatchTally();
  const prep: Preparation = { deps, connector, reader, job };

  // Searches and report reads come before the locks: an event for one of these records must not wait behind
  // them, and they are shared through the report cache, so planning twice costs Redis reads only.
  // The marks are taken before the records are read: a write another holder makes after them shows in them.
  const marks = await index.stateMarks(installationId, job.recordIds);
  const loaded = await loadRecords(connector, job.records, job.recordIds);
  let planned = await prepare(prep, loaded.records, freshSlugsOf(job));

  const locks = await deps.recordLocks.lock(installationId, job.recordIds);
  try {
    // Under the locks: read what the records hold now, compare, write, and keep the index.
    const now = await index.stateMarks(installationId, job.recordIds);
    const gone = new Set(loaded.vanished);
    const moved = job.recordIds.filter((id, i) => marks[i] !== now[i] && !gone.has(id));
    if (gone.size > 0) await index.forget(installationId, loaded.vanished);
    // An event, a decision or another batch wrote these since they were read: plan them again from the CRM as
    // it is now, never write the older plan over what it wrote.
    if (moved.length > 0) planned = await replan(prep, planned, moved);
    const { records, waiting, plans, reads } = planned;
    tally.result.records = records.length;
    const alerts = await deps.alerts.latest(
      [...plans.plans.values()].flatMap((p) => (p.kind === 'linked' ? [p.slug] : [])),
    );
    const grain = connector.limits.valueGrain;
    const desired = desiredValues(
      records,
      plans,
      reads,
      await reader.nextSeq(),
      matching,
      tally,
      grain,
      alerts,
    );
    if (isPreview(job)) {
      // What the write would do, counted by the same step that decides it; nothing is written or kept.
      const updates = await keepChanged(index, installationId, records, desired, tally, grain, {
        dryRun: true,
      });
      tally.result.wouldWrite = updates.length;
      tally.result.samples = previewSamples(records, desired);
      return { result: tally.result, retryRecordIds: [], staleSlugs: [] };
    }
    const updates = await keepChanged(index, installationId, records, desired, tally, grain);
    await writeUpdates(
      {
        index,
        connector,
        installationId,
        held: locks.held,
        ...(deps.metrics ? { metrics: deps.metrics } : {}),
      },
      updates,
      desired,
      tally,
    );
    await resolveRequests(deps, installationId, waiting, plans.plans);
    if (runId) await deps.runLinks.add(installationId, runId, newAutoLinks(plans.plans));
    return {
      result: tally.result,
      retryRecordIds: tally.retryRecordIds,
      staleSlugs: await staleSlugsOf(deps, plans.plans, desired),
      vanished: loaded.vanished,
      slugMoved: [...plans.plans].flatMap(([id, plan]) => (plan.kind === 'skip' && plan.moved ? [id] : [])),
    };
  } finally {
    await locks.release();
  }
}

interface Preparation {
  deps: BatchDeps;
  connector: CrmConnector;
  reader: ReportReader;
  job: BatchJob;
}

/** The records' plans and the reports they link, worked out without the records' locks. */
interface Planned {
  records: CompanyRecord[];
  /** Records with a pending report request. */
  waiting: Map<string, ReportRequest>;
  plans: Plans;
  reads: Map<string, ReportRead>;
}

/** Plans each record's link (searching where it has none) and reads each linked report once. */
async function prepare(
  prep: Preparation,
  records: CompanyRecord[],
  /** Slugs read from the service whatever is kept (a decision named them). */
  freshSlugs: string[],
): Promise<Planned> {
  const { deps, reader, job } = prep;
  const { index, matching } = deps;
  const { installationId } = job;
  const waiting = await deps.requests.pendingAmong(
    installationId,
    records.map((r) => r.id),
  );
  const plans = await planLinks(
    index,
    job,
    records,
    (record) => searchAndDecide({ index, matching, reader, installationId }, record),
    new Set(waiting.keys()),
    requestedReportJudge(matching, reader),
  );
  const reads = await readLinkedReports(reader, plans.plans.values(), freshSlugs);
  return { records, waiting, plans, reads };
}

/**
 * Plans `moved` again from the records as the CRM holds them now (read under the locks); the others keep their
 * plans. Searches and reads come from the report cache, filled by the first plan or by the writer that moved them.
 */
async function replan(prep: Preparation, planned: Planned, moved: string[]): Promise<Planned> {
  const { deps, connector, job } = prep;
  const again = await loadRecords(connector, undefined, moved);
  if (again.vanished.length > 0) await deps.index.forget(job.installationId, again.vanished);
  // A slug the first plan already read anew is not read anew twice: the cache has that read.
  const freshSlugs = freshSlugsOf(job).filter((slug) => !planned.reads.has(slug));
  const fresh = await prepare(prep, again.records, freshSlugs);
  const movedSet = new Set(moved);
  const records = [...planned.records.filter((r) => !movedSet.has(r.id)), ...fresh.records];
  const waiting = new Map(planned.waiting);
  const plans = new Map(planned.plans.plans);
  const reviewItems = new Map(planned.plans.reviewItems);
  for (const id of moved) {
    waiting.delete(id);
    plans.delete(id);
    reviewItems.delete(id);
  }
  for (const [id, request] of fresh.waiting) waiting.set(id, request);
  for (const [id, plan] of fresh.plans.plans) plans.set(id, plan);
  for (const [id, item] of fresh.plans.reviewItems) reviewItems.set(id, item);
  // A slug read again is read as of now: a record of the first plan on it gets the newer read too.
  const reads = new Map([...planned.reads, ...fresh.reads]);
  return { records, waiting, plans: { plans, reviewItems }, reads };
}

/**
 * The batch's records (as listed, or read in the CRM's read size), and those gone since (the caller forgets
 * them under the locks).
 */
async function loadRecords(
  connector: CrmConnector,
  listed: CompanyRecord[] | undefined,
  recordIds: string[],
): Promise<{ records: CompanyRecord[]; vanished: string[] }> {
  const records = listed ?? (await readInChunks(connector, recordIds));
  const present = new Set(records.map((r) => r.id));
  return { records, vanished: recordIds.filter((id) => !present.has(id)) };
}

async function readInChunks(connector: CrmConnector, ids: string[]): Promise<CompanyRecord[]> {
  const out: CompanyRecord[] = [];
  for (let i = 0; i < ids.length; i += connector.limits.readBatchSize) {
    out.push(...(await connector.readCompanies(ids.slice(i, i + connector.limits.readBatchSize))));
  }
  return out;
}

/**
 * A waiting record that is now linked (or sent to review) no longer waits: its request ends, once the record
 * holds that state (the write succeeded or there was nothing to change).
 */
async function resolveRequests(
  deps: BatchDeps,
  installationId: string,
  waiting: Map<string, ReportRequest>,
  plans: Map<string, Plan>,
): Promise<void> {
  for (const recordId of waiting.keys()) {
    const plan = plans.get(recordId);
    if (plan?.kind !== 'linked' && plan?.kind !== 'review') continue;
    const status = await deps.index.statusOf(installationId, recordId);
    if (plan.kind === 'linked' && (status === 'matched' || status === 'not_published'))
      await deps.requests.resolve(installationId, recordId, 'linked', plan.slug);
    else if (plan.kind === 'review' && status === 'needs_review')
      await deps.requests.resolve(installationId, recordId, 'review');
  }
}

/** Slugs whose change mark is newer than the oldest data this batch wrote from them. */
async function staleSlugsOf(
  deps: BatchDeps,
  plans: Map<string, Plan>,
  desired: Map<string, Desired>,
): Promise<string[]> {
  const oldest = new Map<string, number>();
  for (const [id, plan] of plans) {
    const d = desired.get(id);
    if (plan.kind !== 'linked' || !d || d.state.status === 'error') continue;
    oldest.set(plan.slug, Math.min(oldest.get(plan.slug) ?? d.seq, d.seq));
  }
  const changed = await deps.slugChanges.seqs([...oldest.keys()]);
  return [...oldest].filter(([slug, seq]) => (changed.get(slug) ?? 0) > seq).map(([slug]) => slug);
}

/** A few records of each status, as a preview shows them. */
function previewSamples(records: CompanyRecord[], desired: Map<string, Desired>): PreviewSample[] {
  const samples: PreviewSample[] = [];
  const perStatus = new Map<string, number>();
  for (const record of records) {
    const state = desired.get(record.id)?.state;
    if (!state?.status) continue;
    const n = perStatus.get(state.status) ?? 0;
    if (n >= PREVIEW_SAMPLES_PER_BATCH) continue;
    perStatus.set(state.status, n + 1);
    samples.push({
      recordId: record.id,
      name: record.name,
      status: state.status,
      slug: state.slug,
      candidates: (state.review?.candidates ?? []).slice(0, 3).map((c) => c.slug),
    });
  }
  return samples;
}

function newAutoLinks(plans: Map<string, Plan>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [id, plan] of plans) {
    if (plan.kind === 'linked' && plan.newlyLinked && plan.autoLinked) out.set(id, plan.slug);
  }
  return out;
}
