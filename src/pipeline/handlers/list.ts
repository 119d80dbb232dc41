import type { CompanyRecord, CrmConnector } from '../../crm/connector.js';
import type { RunState } from '../../storage/runs.js';
import type { ListedLink } from '../../storage/slug-index.js';
import { cleanSlug } from '../batch/plan.js';
import { batchIdOf, pageBatches } from '../batch/sizing.js';
import type { ListJob, RunningJob } from '../jobs.js';
import type { Pipeline } from '../pipeline.js';
import { jobIdPart } from '../queues.js';
import { Reschedule } from '../reschedule.js';

/** Batches of one run allowed in the queue at once, so installations take turns on a shared queue. */
export const MAX_OUTSTANDING_BATCHES = 8;

/** `list`: lists one page at a time and turns it into batch jobs, keeping a bounded number outstanding. */
export async function list(
  p: Pipeline,
  start: ListJob,
  job: RunningJob<ListJob>,
): Promise<Reschedule<ListJob> | undefined> {
  const { runtime, runs } = p.deps;
  let data = start;
  const { connector } = await runtime.open(data.installationId, { preview: data.preview === true });
  for (;;) {
    // A run stopped (superseded by a full sync, found stale, its installation stopped) lists no further.
    const state = await runs.state(data.runId);
    if (state === 'stopped') return undefined;
    // No cursor past the first page is the listing's end, saved before it was finished: a lister killed there
    // finishes it. Listing from the start again would batch and count every record a second time.
    if (data.cursor === null && data.page > 0) return finishListing(p, connector, data, state);
    const outstanding = data.batches - (await runs.batchesDone(data.runId));
    if (outstanding >= MAX_OUTSTANDING_BATCHES) return new Reschedule(250, data);
    const page = await connector.listCompanies(data.cursor);
    // Before the batches exist: an event for a slug a person set reaches its record from now on, not only once
    // the record's batch (a Bulk-sized one may take minutes) has indexed it.
    if (!data.preview) await fileListedLinks(p, data.installationId, page.records);
    const batches = pageBatches(page.records, data.page, {
      writeBatchSize: connector.limits.writeBatchSize,
      bulkThreshold: connector.bulkThreshold,
    });
    for (const [i, records] of batches.entries()) {
      const batchId = batchIdOf(data.page, i);
      await p.enqueueBatch(
        'backfill',
        {
          installationId: data.installationId,
          batchId,
          mode: data.mode,
          recordIds: records.map((r) => r.id),
          records,
          origin: data.preview ? { kind: 'preview', runId: data.runId } : { kind: 'sync', runId: data.runId },
        },
        { jobId: `batch-${jobIdPart(data.runId)}-${batchId}` },
      );
    }
    await runs.addListed(data.runId, data.page, page.records.length);
    // Every full listing keeps what it listed: one asked to forget as well joins it (runs-widen.lua) and
    // forgets from there, without listing again.
    if (data.forgetUnlisted || (data.mode === 'full' && !data.preview))
      await p.unlisted.addListed(
        data.installationId,
        data.runId,
        page.records.map((r) => r.id),
      );
    data = { ...data, cursor: page.nextCursor, page: data.page + 1, batches: data.batches + batches.length };
    // Saved before the next page: a killed lister resumes here, and re-enqueued batch ids are deduplicated.
    await job.updateData(data);
  }
}

async function finishListing(
  p: Pipeline,
  connector: CrmConnector,
  data: ListJob,
  state: RunState | null,
): Promise<undefined> {
  const { runs, index } = p.deps;
  // Asked by the job, or by a listing that joined this one (runs-widen.lua).
  const forgets = async () => data.forgetUnlisted === true || (await runs.forgetsUnlisted(data.runId));
  // Once the listing was finished the run's listed set is gone: forgetting again would check every record.
  if (state !== 'listing') {
    await runs.listingDone(data.runId, data.batches);
    return undefined;
  }
  let forgotten = false;
  if (await forgets()) {
    await p.unlisted.forgetUnlisted(index, connector, data.installationId, data.runId);
    forgotten = true;
  }
  await runs.listingDone(data.runId, data.batches);
  // A widening lands only while the run lists: one just before the listing's end shows here, the set still kept.
  if (!forgotten && (await forgets()))
    await p.unlisted.forgetUnlisted(index, connector, data.installationId, data.runId);
  else if (!forgotten) await p.unlisted.drop(data.installationId, data.runId);
  return undefined;
}

/** The page's records whose CRM slug the index does not file them under (SlugIndex.addListed). */
async function fileListedLinks(p: Pipeline, installationId: string, records: CompanyRecord[]): Promise<void> {
  const { index } = p.deps;
  const withSlug = records.flatMap((r) => {
    const slug = cleanSlug(r.fields.slug);
    return slug ? [{ recordId: r.id, slug }] : [];
  });
  if (withSlug.length === 0) return;
  const indexed = await index.slugsOf(
    installationId,
    withSlug.map((l) => l.recordId),
  );
  const links: ListedLink[] = withSlug.filter((l, i) => indexed[i] !== l.slug);
  await index.slugs.addListed(installationId, links);
}
