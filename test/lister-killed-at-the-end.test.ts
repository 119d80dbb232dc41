import { describe, expect, it } from 'vitest';
import { list } from '../src/pipeline/handlers/list.js';
import { type ListJob, parseJobData } from '../src/pipeline/jobs.js';
import { suiteSystem } from './support/local-system.js';
import { runEnded } from './support/system-state.js';

/**
 * A lister saves its place after every page, the listing's end included (no cursor left), before it marks the
 * listing done. Killed between the two, its job runs again from that place: it must finish the listing, not
 * list every record again from the start (found on a Redis Cluster with the workers and a master SIGKILLed:
 * 1,200 records listed for a 600-company portal), and once the run is done it must leave it done.
 */

const COMPANIES = 250;

const system = suiteSystem({ companies: COMPANIES, workers: 0, firstSync: false });

describe('a lister killed after saving the listing’s end', () => {
  it('finishes the listing once and leaves a done run done', { timeout: 120_000 }, async () => {
    const { ctx, installationId } = system;
    await (await ctx.runtime.open(installationId)).connector.ensureFields();
    await ctx.queues.backfill.pause();
    await ctx.startWorkers();
    const runId = await ctx.pipeline.startSync(installationId, 'initial');
    const listJob = (await ctx.queues.backfill.getWaiting()).find((j) => j.name === 'list');
    expect(listJob).toBeDefined();
    let saved: ListJob | undefined;
    const job = {
      id: listJob!.id ?? 'list',
      attemptsStarted: 1,
      updateData: async (next: ListJob) => {
        saved = next;
      },
    };
    await list(ctx.pipeline, parseJobData('list', listJob!.data), job);
    await listJob!.remove();
    expect(saved?.cursor).toBeNull();
    expect(saved?.page).toBeGreaterThan(1);
    const batchJobs = await ctx.queues.backfill.getWaitingCount();
    expect(batchJobs).toBe(saved!.batches);

    // The same job again from its saved place, as BullMQ hands a dead worker's job to the next one.
    await list(ctx.pipeline, saved!, job);
    expect(await ctx.queues.backfill.getWaitingCount()).toBe(batchJobs);
    expect((await ctx.runs.get(runId))?.recordsListed).toBe(COMPANIES);

    await ctx.queues.backfill.resume();
    const done = await runEnded(system, runId);
    expect(done.state).toBe('done');
    expect(done.recordsListed).toBe(COMPANIES);
    expect(done.batchesDone).toBe(saved!.batches);

    // Killed once more after the run ended: the run stays done, with its summary.
    await list(ctx.pipeline, saved!, job);
    const after = await ctx.runs.get(runId);
    expect(after?.state).toBe('done');
    expect(after?.totals).toEqual(done.totals);
  });
});
