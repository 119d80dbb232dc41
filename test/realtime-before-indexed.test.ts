import { describe, expect, it } from 'vitest';
import { list } from '../src/pipeline/handlers/list.js';
import { parseJobData } from '../src/pipeline/jobs.js';
import { suiteSystem } from './support/local-system.js';
import { postScoreChanged } from './support/report-webhooks.js';
import { runEnded, scoreOnRecord } from './support/system-state.js';

/**
 * Issue 30: an event reaches a record whose slug a person set in the CRM while the first sync has listed the
 * record but its batch has not written it yet. On Salesforce a 500-company org is one Bulk-sized batch after
 * the first 25 records: its searches and reads take minutes at a slow key, and the record was found for the
 * event only once that batch had indexed it. Here the batch cannot run at all (the backfill queue is paused
 * after the listing): the event must land without it, and the batch, let go afterwards, must not write the
 * older score over it.
 */

const system = suiteSystem({ crm: 'salesforce', companies: 30, workers: 0, firstSync: false });

async function scoreChanged(slug: string): Promise<void> {
  expect((await postScoreChanged(system, slug)).status).toBe(202);
}

describe('an event for a record a run listed but has not indexed', () => {
  it('lands before the backfill reaches the record, and the backfill keeps it', {
    timeout: 120_000,
  }, async () => {
    const { ctx, installationId } = system;
    // A slug a person set (the seed's "renamed" companies), on a published report.
    const i = system.seed.findIndex((c) => c.slug !== null && c.expected.status === 'matched');
    expect(i).toBeGreaterThanOrEqual(0);
    const recordId = system.recordIds[i]!;
    const slug = system.seed[i]!.slug!;

    // The first sync listed, its batches queued and held: only the realtime lane works.
    await ctx.queues.backfill.pause();
    await ctx.startWorkers();
    const runId = await ctx.pipeline.startSync(installationId, 'initial');
    const listJob = (await ctx.queues.backfill.getWaiting()).find((j) => j.name === 'list');
    expect(listJob).toBeDefined();
    await list(ctx.pipeline, parseJobData('list', listJob!.data), {
      id: listJob!.id ?? 'list',
      attemptsStarted: 1,
      createdAt: listJob!.timestamp,
      updateData: async () => {},
    });
    await listJob!.remove();
    expect(await ctx.queues.backfill.getWaitingCount()).toBeGreaterThan(0);
    expect(await ctx.index.statusOf(installationId, recordId)).toBeNull();
    expect(system.crm.record(recordId)?.syncedAt).toBeNull();

    const score = system.sandbox.getReport(slug)!.score.overall + 6.5;
    system.sandbox.updateReport(slug, { score: { overall: score } });
    await scoreChanged(slug);
    await scoreOnRecord(system, recordId, score, 'the new score on the record the run listed', 20_000);
    // Real time wrote it, not the backfill: the records without a slug are still untouched.
    const untouched = system.recordIds.filter((id, n) => n !== i && !system.crm.record(id)?.syncedAt);
    expect(untouched.length).toBeGreaterThan(0);

    await ctx.queues.backfill.resume();
    await runEnded(system, runId);
    const after = system.crm.record(recordId)!;
    expect(after.score).toBe(score);
    expect(after.status).toBe('matched');
    expect(after.linkSource).toBe('person');
  });
});
