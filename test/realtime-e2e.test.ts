import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { COALESCE_MS } from '../src/pipeline/score-changes/updates.js';
import { suiteSystem } from './support/local-system.js';
import { postSignedEvent } from './support/report-webhooks.js';
import { waitFor } from './support/wait.js';

const system = suiteSystem({ companies: 300 }, { firstRunEnded: true });

function matchedRecords() {
  return system.recordIds.map((id) => system.crm.record(id)!).filter((r) => r.status === 'matched' && r.slug);
}

const secret = () => system.ctx.config.reports.webhookSecrets[0]!;

async function sendEvent(type: string, slug: string, id = `msg_${randomUUID()}`) {
  const body = JSON.stringify({ id, type, created_at: new Date().toISOString(), data: { slug } });
  return postSignedEvent(`${system.appUrl}/webhooks/reports`, secret(), body, { id });
}

/** Nothing left: no marked score change, no job on the realtime queue or (a storm's updates) the backfill queue. */
async function allWorkDone(): Promise<void> {
  await waitFor(
    'the inbox and the queues to drain',
    async () => {
      if ((await system.ctx.pipeline.deps.inbox.waiting()) > 0) return undefined;
      for (const queue of [system.ctx.queues.realtime, system.ctx.queues.backfill]) {
        const c = await queue.getJobCounts('active', 'delayed', 'waiting', 'prioritized');
        if ((c.active ?? 0) + (c.delayed ?? 0) + (c.waiting ?? 0) + (c.prioritized ?? 0) > 0)
          return undefined;
      }
      return true;
    },
    60_000,
    100,
  );
}

describe('score.changed end to end', () => {
  it('a score changed in the sandbox reaches every CRM record linked to it', async () => {
    const target = matchedRecords()[0]!;
    const linked = matchedRecords().filter((r) => r.slug === target.slug);
    const current = system.sandbox.getReport(target.slug!)!.score.overall;
    const next = current + 3.25;
    system.sandbox.updateReport(target.slug!, { score: { overall: next } });
    await waitFor(
      'the new score on every linked record',
      () => (linked.every((r) => system.crm.record(r.id)?.score === next) ? true : undefined),
      15_000,
      50,
    );
  });

  it('an unpublished report empties the fields and keeps the link', async () => {
    const target = matchedRecords()[1]!;
    system.sandbox.updateReport(target.slug!, { published: false });
    // Unpublishing sends no event at the sandbox (the interface documents none): the service's own event is simulated.
    expect((await sendEvent('score.changed', target.slug!)).status).toBe(202);
    await waitFor(
      'not_published',
      () => (system.crm.record(target.id)?.status === 'not_published' ? true : undefined),
      15_000,
      50,
    );
    const r = system.crm.record(target.id)!;
    expect(r.slug).toBe(target.slug);
    expect(r.score).toBeNull();
    system.sandbox.updateReport(target.slug!, { published: true });
  });

  it('an old event arriving after a newer one leaves the current data (it re-reads, never trusts the payload)', async () => {
    const target = matchedRecords()[2]!;
    const fresh = system.sandbox.getReport(target.slug!)!.score.overall + 1.5;
    system.sandbox.updateReport(target.slug!, { score: { overall: fresh } });
    await waitFor(
      'the fresh score',
      () => (system.crm.record(target.id)?.score === fresh ? true : undefined),
      15_000,
      50,
    );
    const syncedAt = system.crm.record(target.id)!.syncedAt;
    const reads = system.sandbox.requestCount({ route: 'GET /v1/reports/:slug' });
    expect((await sendEvent('score.changed', target.slug!)).status).toBe(202);
    await waitFor(
      'the late event to be read',
      () => (system.sandbox.requestCount({ route: 'GET /v1/reports/:slug' }) > reads ? true : undefined),
      15_000,
      50,
    );
    await waitFor('the queue to drain', async () =>
      (await system.ctx.queues.realtime.getJobCounts('active', 'delayed', 'waiting')).active === 0
        ? true
        : undefined,
    );
    const after = system.crm.record(target.id)!;
    expect(after.score).toBe(fresh);
    // Nothing changed, so nothing was written.
    expect(after.syncedAt).toBe(syncedAt);
  });

  it('a burst of 1,000 events for 50 slugs coalesces into about one read per slug', async () => {
    const slugs = [...new Set(matchedRecords().map((r) => r.slug!))].slice(0, 50);
    expect(slugs.length).toBeGreaterThanOrEqual(50);
    const readsBefore = system.sandbox.requestCount({ route: 'GET /v1/reports/:slug' });
    const started = Date.now();
    const statuses: number[] = [];
    for (let i = 0; i < 1000; i += 50) {
      const batch = await Promise.all(
        Array.from({ length: 50 }, (_, j) => sendEvent('score.changed', slugs[(i + j) % 50]!)),
      );
      statuses.push(...batch.map((r) => r.status));
    }
    const burstMs = Date.now() - started;
    expect(statuses.every((s) => s === 202)).toBe(true);
    await allWorkDone();
    const reads = system.sandbox.requestCount({ route: 'GET /v1/reports/:slug' }) - readsBefore;
    // At most one read per slug per coalescing window that the burst spans, and far fewer reads than events.
    const windows = Math.ceil(burstMs / COALESCE_MS) + 1;
    const detail = `${reads} reads for 1000 events over ${burstMs} ms (${windows} windows)`;
    expect(reads, detail).toBeLessThanOrEqual(50 * windows);
    expect(reads, detail).toBeLessThanOrEqual(250);
    expect(reads).toBeGreaterThanOrEqual(50);
  });

  it('changes on many reports at once are written together, in full CRM batches', async () => {
    await allWorkDone();
    const linked = matchedRecords();
    const slugs = [...new Set(linked.map((r) => r.slug!))].slice(0, 80);
    const records = linked.filter((r) => slugs.includes(r.slug!));
    for (const [i, slug] of slugs.entries())
      system.sandbox.updateReport(slug, { score: { overall: 30 + i / 10 } });
    system.hubspot.resetStats();
    // One event per report, all at once: single changes, none of them hot.
    const sent = await Promise.all(slugs.map((slug) => sendEvent('score.changed', slug)));
    expect(sent.every((r) => r.status === 202)).toBe(true);
    await allWorkDone();
    for (const r of records) expect(system.crm.record(r.id)?.score).toBe(30 + slugs.indexOf(r.slug!) / 10);
    const { batchSizes } = system.hubspot.stats();
    const detail = `${records.length} records of ${slugs.length} reports written in batches of ${batchSizes.join(', ')}`;
    // One write per report would be 80 calls; gathered, a few full batches and a remainder or two (the events
    // reach the fan-out over more than one coalescing window).
    expect(
      batchSizes.reduce((a, b) => a + b, 0),
      detail,
    ).toBe(records.length);
    expect(batchSizes.length, detail).toBeLessThanOrEqual(Math.ceil(records.length / 100) + 3);
  });

  it('a storm loses no update: every storm report ends with its last score, and a single change lands too', async () => {
    const linked = [...new Set(matchedRecords().map((r) => r.slug!))];
    const storm = linked.slice(60, 70);
    const single = linked[75]!;
    const last = new Map<string, number>();
    const statuses: number[] = [];
    for (let round = 0; round < 20; round++) {
      // The service re-scores the storm's reports while it sends far more events than changes.
      for (const slug of storm) {
        const score = 20 + round + storm.indexOf(slug) / 10;
        system.sandbox.updateReport(slug, { score: { overall: score } });
        last.set(slug, score);
      }
      const batch = await Promise.all(
        Array.from({ length: 40 }, (_, j) => sendEvent('score.changed', storm[j % storm.length]!)),
      );
      statuses.push(...batch.map((r) => r.status));
      if (round === 10) {
        system.sandbox.updateReport(single, { score: { overall: 77.7 } });
        last.set(single, 77.7);
      }
    }
    expect(statuses.every((st) => st === 202)).toBe(true);
    await allWorkDone();
    for (const [slug, score] of last) {
      const records = matchedRecords().filter((r) => r.slug === slug);
      expect(records.length, slug).toBeGreaterThan(0);
      for (const r of records) expect(system.crm.record(r.id)?.score, `${slug} ${r.id}`).toBe(score);
    }
  });
});

describe('CRM-side changes from HubSpot webhooks', () => {
  it('a slug set by a person on an unmatched company re-enriches it at once', async () => {
    const unmatched = system.recordIds
      .map((id) => system.crm.record(id)!)
      .find((r) => r.status === 'no_match')!;
    const slug = matchedRecords()[5]!.slug!;
    await system.hubspot.setCompanyProperty(unmatched.id, 'report_slug', slug, { notify: true });
    await waitFor(
      'the record to be enriched',
      () => (system.crm.record(unmatched.id)?.status === 'matched' ? true : undefined),
      15_000,
      50,
    );
    expect(system.crm.record(unmatched.id)!.score).toBe(system.sandbox.getReport(slug)!.score.overall);
    // A person's link: a later score change reaches it too.
    const next = system.sandbox.getReport(slug)!.score.overall + 0.5;
    system.sandbox.updateReport(slug, { score: { overall: next } });
    await waitFor(
      'fan-out to the hand-linked record',
      () => (system.crm.record(unmatched.id)?.score === next ? true : undefined),
      15_000,
      50,
    );
  });

  it('a new company is linked and enriched', async () => {
    const report = system.sandbox
      .listReports()
      .find((r) => r.published && /^[A-Za-z ]+$/.test(r.name) && r.name.split(' ').length >= 2)!;
    const created = await system.hubspot.createCompany(
      { name: report.name, country: report.geography.split(',').pop()!.trim() },
      { notify: true },
    );
    await waitFor(
      'the new company to be processed',
      () => (system.crm.record(created.id)?.status ? true : undefined),
      15_000,
      50,
    );
    const r = system.crm.record(created.id)!;
    expect(['matched', 'needs_review']).toContain(r.status);
    if (r.status === 'matched') expect(r.slug).toBe(report.slug);
  });
});
