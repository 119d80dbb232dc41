import { afterEach, describe, expect, it } from 'vitest';
import { BULK_THRESHOLD, SALESFORCE_LIMITS } from '../connectors/salesforce/provider.js';
import type { LocalSystem } from '../local/system.js';
import { FIRST_BATCH_RECORDS, pageBatches } from '../src/pipeline/batch/sizing.js';
import { ROUTES } from '../src/sandbox/index.js';
import { startTestSystem, stopTestSystem } from './support/local-system.js';
import { runEnded } from './support/system-state.js';
import { waitFor } from './support/wait.js';

/**
 * Issue 13, end to end: a backfill against upstreams that push back. The sandbox throttles the key per second
 * (429 with Retry-After) and answers 2% of calls 503; the connector paces itself above that throttle, as it
 * does against a service that publishes no limits. On Salesforce, 5% of the records in a collection write are
 * refused with UNABLE_TO_LOCK_ROW (seeded, so the same records every run) and must be tried again. Counted at
 * the services: answered report reads per slug, collection calls and their sizes. No timings are asserted.
 */

const COMPANIES = 300;
const THROTTLE = { ratePerSecond: 25, failShare: 0.02 };

let system: LocalSystem | undefined;

afterEach(async () => {
  await stopTestSystem(system);
  system = undefined;
});

async function throttledSystem(crm: string): Promise<LocalSystem> {
  system = await startTestSystem({
    crm,
    companies: COMPANIES,
    sandboxRateLimitPerMinute: 3_000,
    sandboxFaults: THROTTLE,
  });
  return system;
}

/** The run has ended and nothing is left in the work queues (records handed back for another try). */
async function settled(s: LocalSystem, runId?: string) {
  const run = await runEnded(s, runId);
  await waitFor(
    'the work queues to empty',
    async () => {
      const counts = await s.ctx.queues.counts();
      const busy = [counts.backfill, counts.realtime].some((c) => c.waiting + c.active + c.delayed > 0);
      return busy ? undefined : true;
    },
    60_000,
  );
  return run;
}

function sortedDown(sizes: number[]): number[] {
  return [...sizes].sort((a, b) => b - a);
}

function slugsReadMoreThanOnce(s: LocalSystem): [string, number][] {
  return [...s.sandbox.answeredReads()].filter(([, n]) => n > 1);
}

describe('a backfill against throttling, failing upstreams', () => {
  it('Salesforce: row-locked records ride in the batch’s next write call; no slug is read twice', async () => {
    const s = await throttledSystem('salesforce');
    const salesforce = s.salesforce!;
    // Before the first write (the batch first searches and reads for 300 Accounts at 25 calls a second).
    expect(salesforce.collectionSizes()).toEqual([]);
    salesforce.injectFaults({ lockRowShare: 0.05, seed: 13 });
    const run = await settled(s);
    expect(run.state).toBe('done');
    expect(s.sandbox.requestCount()).toBeGreaterThan(s.sandbox.answeredReads().size);

    expect(slugsReadMoreThanOnce(s)).toEqual([]);
    const sizes = salesforce.collectionSizes();
    const changed = s.recordIds.filter((id) => s.crm.record(id)?.syncedAt).length;
    expect(changed).toBe(COMPANIES);
    // 300 records are three batches (the run's small first one, then collection-sized ones: 200 and 75); what
    // a call had refused rides in its batch's next call: at most one resend per batch, never a call per refusal.
    const batches = pageBatches(s.recordIds, 0, {
      writeBatchSize: SALESFORCE_LIMITS.writeBatchSize,
      bulkThreshold: BULK_THRESHOLD,
    }).map((b) => b.length);
    expect(batches).toEqual([FIRST_BATCH_RECORDS, 200, COMPANIES - FIRST_BATCH_RECORDS - 200]);
    expect(Math.max(...sizes)).toBe(200);
    expect(sizes.length).toBeLessThanOrEqual(batches.length * 2);
    expect(sizes.reduce((a, b) => a + b, 0) - COMPANIES).toBeLessThan(COMPANIES * 0.1);

    // A second sync of the unchanged CRM, right after the first, writes nothing.
    salesforce.clearFaults();
    salesforce.resetCounters();
    const second = await s.ctx.pipeline.startSync(s.installationId, 'full');
    const again = await settled(s, second);
    expect(again.totals.written).toBe(0);
    expect(salesforce.collectionSizes()).toEqual([]);
  });

  it('HubSpot (110 calls per 10 s): full batches of 100, one read per slug, nothing written again', async () => {
    const s = await throttledSystem('hubspot');
    const run = await settled(s);
    expect(run.state).toBe('done');
    expect(slugsReadMoreThanOnce(s)).toEqual([]);
    // The run's small first batch (issue 30), then full ones: 25 and 75 from the first page of 100.
    expect(sortedDown(s.hubspot.stats().batchSizes)).toEqual([
      100,
      100,
      100 - FIRST_BATCH_RECORDS,
      FIRST_BATCH_RECORDS,
    ]);

    s.hubspot.resetStats();
    const second = await s.ctx.pipeline.startSync(s.installationId, 'full');
    const again = await settled(s, second);
    expect(again.totals.written).toBe(0);
    expect(s.hubspot.stats().batchSizes).toEqual([]);
  });

  it('Salesforce: a batch failing after its first collection is run again without rewriting what it wrote', async () => {
    const s = await throttledSystem('salesforce');
    const salesforce = s.salesforce!;
    expect(salesforce.collectionSizes()).toEqual([]);
    // The third collection call answers 503 (the small first batch writes one, the other batch's first is the
    // second): the job fails and BullMQ runs it again.
    salesforce.injectFaultsAfterCollections(2, { serverErrors: 1 });
    const run = await settled(s);
    expect(run.state).toBe('done');
    expect(s.recordIds.filter((id) => s.crm.record(id)?.syncedAt).length).toBe(COMPANIES);
    // The 200 the first attempt wrote are not sent again (they were, from the listing's copy: 200, 200, 75).
    expect(sortedDown(salesforce.collectionSizes())).toEqual([
      200,
      100 - FIRST_BATCH_RECORDS,
      FIRST_BATCH_RECORDS,
    ]);
  });

  it('HubSpot: a score change whose write fails is written on the job’s rerun without reading the report again', async () => {
    system = await startTestSystem({ companies: 40 });
    const s = system;
    await settled(s);
    const linked = s.recordIds.map((id) => s.crm.record(id)!).find((r) => r.status === 'matched')!;
    const slug = linked.slug!;
    const next = s.sandbox.getReport(slug)!.score.overall + 3.25;
    s.sandbox.resetRequestCounts();
    // The read takes a second, long enough to arm the CRM's failures while it is under way.
    s.sandbox.setFaults({ delayMs: 1_000 });
    s.sandbox.updateReport(slug, { score: { overall: next } });
    await waitFor('the slug update to read the report', () =>
      s.sandbox.requestCount({ route: ROUTES.report }) > 0 ? true : undefined,
    );
    // Its write then meets 503s until the client gives up: the job fails and runs again.
    s.hubspot.injectFaults({ failNext: 5, failStatus: 503 });
    await waitFor('the new score on the record', () =>
      s.crm.record(linked.id)?.score === next ? true : undefined,
    );
    s.sandbox.clearFaults();
    expect(s.hubspot.stats().statuses['503']).toBe(5);
    expect(s.sandbox.answeredReads().get(slug)).toBe(1);
  });
});
