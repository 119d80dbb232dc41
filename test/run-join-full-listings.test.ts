import { afterEach, describe, expect, it } from 'vitest';
import type { LocalSystem } from '../local/system.js';
import { list } from '../src/pipeline/handlers/list.js';
import { type ListJob, parseJobData } from '../src/pipeline/jobs.js';
import { jobIdPart } from '../src/pipeline/queues.js';
import { fingerprintOf } from '../src/storage/record-state.js';
import { startTestSystem, stopTestSystem } from './support/local-system.js';
import { runEnded } from './support/system-state.js';

/**
 * Two full listings of one installation cover the same ground: a full sync that also forgets records gone from
 * the CRM (what a change poll asks for when the CRM's delete log does not reach back far enough), asked while the
 * first sync lists, joins it. The pages already listed stay listed, the batches already queued stay queued, and
 * the first sync forgets at its end what it did not list. Real Redis and the local HubSpot; the first page is
 * listed by hand, the rest by a worker.
 */

let system: LocalSystem | undefined;

afterEach(async () => {
  await stopTestSystem(system);
  system = undefined;
});

class ListerKilled extends Error {
  readonly code = 'TEST_LISTER_KILLED';
}

describe('a full listing asked for during the first sync', () => {
  it('joins it: one listing pass, no batch processed twice, and what was not listed is forgotten', async () => {
    const s = await startTestSystem({ companies: 250, workers: 0, firstSync: false });
    system = s;
    const { pipeline, runs, queues, index } = s.ctx;
    await (await s.ctx.runtime.open(s.installationId)).connector.ensureFields();
    // A record the index knows and the CRM no longer has: only a listing that forgets drops it.
    await index.apply(s.installationId, [
      {
        recordId: 'gone-since-the-last-poll',
        slug: 'some-report',
        status: 'matched',
        score: 60,
        autoLinked: true,
        unlinkedName: null,
        review: null,
        fingerprint: fingerprintOf({ name: 'Gone', domain: null, fields: { slug: 'some-report' } }),
      },
    ]);

    const first = await pipeline.requestSync(s.installationId, 'initial');
    // The first page is listed and its batches queued; the lister stops there (as if its worker died).
    const listJob = (await queues.backfill.getJob(`list-${jobIdPart(first.runId)}`))!;
    let pages = 0;
    await expect(
      list(pipeline, parseJobData('list', listJob.data), {
        id: listJob.id!,
        attemptsStarted: 1,
        updateData: async (next: ListJob) => {
          await listJob.updateData(next);
          pages += 1;
          if (pages === 1) throw new ListerKilled('the lister stops after its first page');
        },
      }),
    ).rejects.toBeInstanceOf(ListerKilled);
    const listedFirst = (await runs.get(first.runId))!.recordsListed;
    expect(listedFirst).toBeGreaterThan(0);
    expect(listedFirst).toBeLessThan(250);
    const queuedFirst = (await queues.backfill.getJobs(['waiting', 'prioritized'])).filter(
      (j) => j.name === 'batch',
    );
    expect(queuedFirst.length).toBeGreaterThan(0);

    // The change poll asks for a full listing that forgets: it joins the first sync.
    const asked = await pipeline.requestSync(s.installationId, 'full', { forgetUnlisted: true });
    expect(asked).toEqual({ runId: first.runId, joined: true });
    expect(await runs.recent(s.installationId, 10)).toHaveLength(1);
    expect((await runs.get(first.runId))?.forgetUnlisted).toBe(true);
    // The batches queued before stay queued, under the first sync.
    const stillQueued = (await queues.backfill.getJobs(['waiting', 'prioritized'])).filter(
      (j) => j.name === 'batch',
    );
    expect(stillQueued.map((j) => j.id).sort()).toEqual(queuedFirst.map((j) => j.id).sort());

    // A worker lists the rest and processes every batch.
    s.workers.push(await s.ctx.startWorkers());
    const done = await runEnded(s, first.runId);
    expect(done.state).toBe('done');
    expect(done.recordsListed).toBe(250);
    expect(done.batchesDone).toBe(done.batchesTotal);
    // Every record went through one batch, once: the batch jobs done are the run's, and share no record.
    expect(done.totals.records).toBe(250);
    const batches = (await queues.backfill.getJobs(['completed'])).filter((j) => j.name === 'batch');
    expect(batches).toHaveLength(done.batchesTotal!);
    const recordIds = batches.flatMap((j) => (j.data as { recordIds: string[] }).recordIds);
    expect(recordIds).toHaveLength(250);
    expect(new Set(recordIds).size).toBe(250);
    expect(await runs.recent(s.installationId, 10)).toHaveLength(1);
    // The joined listing's part: the record gone from the CRM is forgotten.
    expect(await index.slugsOf(s.installationId, ['gone-since-the-last-poll'])).toEqual([null]);
  });
});

describe('a full listing asked for once the first sync has listed everything', () => {
  it('supersedes it, as it cannot forget what its listing did not see any more', async () => {
    const s = await startTestSystem({ companies: 20, workers: 0, firstSync: false });
    system = s;
    const { pipeline, runs } = s.ctx;
    const first = await pipeline.requestSync(s.installationId, 'initial');
    // A plain full sync joins it whatever its state.
    expect(await pipeline.requestSync(s.installationId, 'full')).toEqual({
      runId: first.runId,
      joined: true,
    });
    await runs.addListed(first.runId, 0, 20);
    await runs.listingDone(first.runId, 3);
    const asked = await pipeline.requestSync(s.installationId, 'full', { forgetUnlisted: true });
    expect(asked).toMatchObject({ joined: false, supersededRunId: first.runId });
    expect((await runs.get(asked.runId))?.forgetUnlisted).toBe(true);
    expect((await runs.get(first.runId))?.state).toBe('stopped');
  });
});
