import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSystem } from '../local/system.js';
import { RETRY_BUDGET } from '../src/retry-budget.js';
import { lockInstallationRecords } from '../src/storage/record-locks.js';
import { startTestSystem, stopTestSystem } from './support/local-system.js';
import { postScoreChanged } from './support/report-webhooks.js';
import { runEnded, scoreOnRecord } from './support/system-state.js';
import { waitFor } from './support/wait.js';

/**
 * Writes made outside a run's batches keep the rules a run's batches keep. An admin's review decision is
 * written under the record's lock: it waits for a batch holding the record, never writes beside it (it wrote
 * the slug before taking the lock until 2026-11-27). A record the CRM still refuses for now (row locks) after
 * its batch's own resends is retried later for a score change too: only a run's batches retried them, and a
 * score change's update dropped them, leaving the old score until the next reconcile.
 */

let hubspot: LocalSystem;
let salesforce: LocalSystem;

beforeAll(async () => {
  [hubspot, salesforce] = await Promise.all([
    startTestSystem({ companies: 40 }),
    startTestSystem({ crm: 'salesforce', companies: 20 }),
  ]);
  await Promise.all([runEnded(hubspot), runEnded(salesforce)]);
}, 120_000);

afterAll(async () => {
  await Promise.all([hubspot, salesforce].flatMap((s) => (s ? [stopTestSystem(s)] : [])));
});

describe('an admin review decision', () => {
  it('waits for the batch that holds the record, then writes the link', { timeout: 60_000 }, async () => {
    const { ctx, installationId, sandbox } = hubspot;
    const [item] = await ctx.index.reviews.items(installationId);
    expect(item).toBeDefined();
    const { recordId } = item!;
    const slug = item!.candidates[0]!.slug;
    const readsBefore = sandbox.answeredReads().get(slug) ?? 0;

    const held = await lockInstallationRecords(ctx.redis, ctx.keys, installationId, [recordId]);
    const decision = ctx.records.resolveReview(installationId, recordId, { action: 'link', slug });
    try {
      // The decision checked the slug and read the report for the write: all it can do before the lock.
      await waitFor(
        'the decision to read the report',
        () => ((sandbox.answeredReads().get(slug) ?? 0) >= readsBefore + 2 ? true : undefined),
        10_000,
        20,
      );
      // A negative check needs a window: long enough for a write that does not wait to land (the local CRM
      // answers in milliseconds).
      await sleep(500);
      expect(hubspot.crm.record(recordId)?.slug).toBeNull();
    } finally {
      await held.release();
    }
    await decision;
    const after = hubspot.crm.record(recordId)!;
    expect(after.slug).toBe(slug);
    expect(after.linkSource).toBe('admin');
    expect(after.status).toBe('matched');
    expect(after.score).toBe(sandbox.getReport(slug)!.score.overall);
    expect(await ctx.index.reviews.item(installationId, recordId)).toBeNull();
  });
});

describe('a record the CRM refuses for now', () => {
  it('gets a score change in a later batch', { timeout: 60_000 }, async () => {
    const { sandbox } = salesforce;
    const org = salesforce.salesforce!;
    const recordId = salesforce.recordIds.find((id) => salesforce.crm.record(id)?.status === 'matched')!;
    expect(recordId).toBeDefined();
    const slug = salesforce.crm.record(recordId)!.slug!;
    const score = sandbox.getReport(slug)!.score.overall + 3.25;

    org.resetCounters();
    org.injectFaults({ lockRowShare: 1, seed: 5 });
    sandbox.updateReport(slug, { score: { overall: score } });
    expect((await postScoreChanged(salesforce, slug)).status).toBe(202);
    // The update's batch sends the record once and resends it as often as its own budget allows.
    const sends = 1 + RETRY_BUDGET.recordRetry.inBatchAttempts;
    await waitFor(
      'the update to spend its batch’s sends',
      () => (org.collectionSizes().length >= sends ? true : undefined),
      30_000,
      20,
    );
    org.clearFaults();
    await scoreOnRecord(salesforce, recordId, score, 'the new score on the refused record', 30_000);
    expect(salesforce.crm.record(recordId)!.status).toBe('matched');
  });
});
