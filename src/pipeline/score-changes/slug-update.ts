import type { EventLatencies } from '../../storage/event-latency.js';
import type { MergeForwarding } from '../../storage/merge-forwarding.js';
import type { SlugIndex } from '../../storage/slug-index.js';
import { chunk } from '../../util/chunk.js';
import type { BatchJob } from '../batch-job.js';
import type { BatchTargets } from '../enrich-batch.js';
import { enrichNow } from '../enrich-now.js';
import type { RunningJob, SlugUpdateJob } from '../jobs.js';
import type { Pipeline } from '../pipeline.js';
import type { InstallationRuntime } from '../runtime.js';
import type { PendingSlugs } from './pending-slugs.js';
import { queueSlugUpdate } from './updates.js';

/** Slugs one update job takes; more are left to the next job, queued at its end. */
const SLUGS_PER_UPDATE = 500;

/** What a slug update works with, and nothing else of the pipeline. */
export interface SlugUpdateDeps {
  pendingSlugs: Pick<PendingSlugs, 'mark' | 'take' | 'since' | 'done'>;
  slugs: Pick<SlugIndex, 'recordsForSlug' | 'listedForSlug'>;
  mergedInto: Pick<MergeForwarding, 'resolve'>;
  runtime: Pick<InstallationRuntime, 'open'>;
  /** One batch of the update, with its follow-ups (enrich-now.ts#enrichNow). */
  enrichNow: (targets: BatchTargets, job: BatchJob) => Promise<unknown>;
  /** Queues the installation's next update of a lane (updates.ts#queueSlugUpdate). */
  queueSlugUpdate: (installationId: string, hot: boolean) => Promise<void>;
  latencies: Pick<EventLatencies, 'record'>;
}

/** The update's dependencies out of the pipeline's. */
export function slugUpdateDeps(p: Pipeline): SlugUpdateDeps {
  const { index, runtime, latencies } = p.deps;
  return {
    pendingSlugs: p.pendingSlugs,
    slugs: index.slugs,
    mergedInto: p.mergedInto,
    runtime,
    enrichNow: (targets, job) => enrichNow(p, targets, job),
    queueSlugUpdate: (installationId, hot) => queueSlugUpdate(p.deps.queues, installationId, hot),
    latencies,
  };
}

/**
 * `slug-update`: re-reads the reports marked for one installation (PendingSlugs) and updates every record
 * linked to them, gathered across the reports and written in the CRM's batch size. Each report is read once
 * for the whole job, shared by its batches and its reruns through the key's report cache; it is fresh without
 * asking: every change marks the slug changed before it is marked here, and the cache serves no read older than
 * the mark, and a later change marks it again and makes a rerun read anew (report-reader.ts). Marks are cleared
 * only once the writes are done, so a killed job's reports are updated by its rerun.
 */
export async function slugUpdate(
  deps: SlugUpdateDeps,
  data: SlugUpdateJob,
  job: RunningJob<SlugUpdateJob>,
): Promise<void> {
  const { pendingSlugs, slugs, runtime } = deps;
  // The lane was decided when the change came in (the inbox's accept): a slug that went hot meanwhile left
  // this lane then (PendingSlugs.mark), so it is not asked again here.
  const lane = data.hot ? 'hot' : 'urgent';
  const { installationId } = data;
  // A job queued before the marks existed names its one slug.
  if (data.slug) await pendingSlugs.mark(installationId, data.slug, lane);
  const taken = await pendingSlugs.take(installationId, lane, SLUGS_PER_UPDATE);
  if (taken.length === 0) return;
  const recordIds = new Set<string>();
  const written: string[] = [];
  for (const { slug } of taken) {
    // Records a run listed on the slug count too: a backfill may not have indexed them yet.
    const linked = [
      ...new Set([
        ...(await slugs.recordsForSlug(installationId, slug)),
        ...(await slugs.listedForSlug(installationId, slug)),
      ]),
    ];
    if (linked.length > 0) written.push(slug);
    for (const id of await deps.mergedInto.resolve(installationId, linked)) recordIds.add(id);
  }
  const since = await pendingSlugs.since(installationId, written);
  if (recordIds.size > 0) {
    // A storm's update is real time too: coalescing keeps it cheap, the urgent lane keeps it prompt;
    // its reads and writes go behind single changes' on the rate gates, so a storm's backlog of re-reads on the
    // key never holds a single change back.
    const targets = await runtime.open(installationId, { urgent: true, ...(data.hot ? { hot: true } : {}) });
    // Only names the batches' origin: reads go through the shared report cache, not one of the job's own.
    const runId = `ev-${job.id}`;
    for (const [i, ids] of chunk([...recordIds], targets.connector.limits.writeBatchSize).entries()) {
      await deps.enrichNow(targets, {
        installationId,
        batchId: `slug-${i}`,
        mode: 'reconcile',
        recordIds: ids,
        origin: { kind: 'report-change', runId },
      });
    }
  }
  await pendingSlugs.done(installationId, lane, taken);
  const now = Date.now();
  await deps.latencies.record(
    'report',
    [...since.values()].map((at) => (now - at) / 1000),
  );
  if (taken.length === SLUGS_PER_UPDATE) await deps.queueSlugUpdate(installationId, data.hot === true);
}
