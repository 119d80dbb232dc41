import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSystem } from '../local/system.js';
import type { BulkReviewOutcome } from '../src/admin/admin-actions.js';
import type { RecordView } from '../src/admin/record-view.js';
import { crmKind } from '../src/providers.js';
import { adminRequest } from './support/admin-api.js';
import { reviewState } from './support/link-states.js';
import { startTestSystem, stopTestSystem } from './support/local-system.js';
import { runEnded } from './support/system-state.js';
import { waitFor } from './support/wait.js';

/**
 * Issue 31: one record as the CRM holds it beside the connector's state, on the admin API and its page (the
 * target of the Salesforce component's links); unknown records and installations are 404.
 */

describe.each(['hubspot', 'salesforce'] as const)('the admin record page on %s', (crm) => {
  let system: LocalSystem;

  beforeAll(async () => {
    system = await startTestSystem({ crm, companies: 15, logLevel: 'silent' });
    await runEnded(system);
  }, 120_000);

  afterAll(async () => {
    await stopTestSystem(system);
  });

  it('shows a linked record with its CRM fields beside the connector state', async () => {
    const id = system.recordIds.find((r) => system.crm.record(r)?.status === 'matched')!;
    const crmRecord = system.crm.record(id)!;
    const api = await adminRequest<RecordView>(
      system,
      `/admin/api/installations/${system.installationId}/records/${id}`,
      { bearer: true },
    );
    expect(api.status).toBe(200);
    expect(api.body).toMatchObject({
      recordId: id,
      crm: { read: true, found: true, name: crmRecord.name, fields: { slug: crmRecord.slug } },
      connector: { status: 'matched', slug: crmRecord.slug },
    });
    const page = await adminRequest(system, `/admin/installations/${system.installationId}/records/${id}`, {
      bearer: true,
    });
    expect(page.status).toBe(200);
    expect(page.text).toContain(crmRecord.slug!);
    expect(page.text).toContain('In the connector');
  });

  it('the alerts section never points at a link it does not show (token mode has no install to repeat)', async () => {
    // The alerts section is on the installation's requests and alerts page.
    const page = await adminRequest(system, `/admin/installations/${system.installationId}/requests`, {
      bearer: true,
    });
    expect(page.status).toBe(200);
    expect(page.text).not.toMatch(/link below/);
    if (crm === 'hubspot') expect(page.text).toContain('This installation uses HUBSPOT_ACCESS_TOKEN');
  });

  it('never accepts tied top candidates in bulk, alone or among others; a first ahead on evidence is accepted', async () => {
    const [tiedId, clearId, aloneId] = system.recordIds.filter(
      (r) => system.crm.record(r)?.status !== 'matched',
    );
    const published = system.sandbox
      .listReports()
      .filter((r) => r.published)
      .map((r) => r.slug);
    // Two namesakes the record (no country, no industry) cannot tell apart: their reports' scores differ,
    // which says nothing about which company the record is.
    const namesakes = (a: string, b: string) => [
      { slug: a, name: 'Harbor Lantern Optics', score: 0.9, why: 'same name' },
      { slug: b, name: 'Harbor Lantern Optics', score: 0.6, why: 'same name' },
    ];
    await system.ctx.index.apply(system.installationId, [
      reviewState(tiedId!, namesakes(published[0]!, published[1]!)),
      reviewState(clearId!, [
        { slug: published[2]!, name: 'Quillfeather Mills', score: 0.5, why: 'same name; same country' },
        { slug: published[3]!, name: 'Quillfeather Mills', score: 0.9, why: 'same name' },
      ]),
      reviewState(aloneId!, namesakes(published[4]!, published[5]!)),
    ]);
    const bulk = `/admin/api/installations/${system.installationId}/review/bulk`;
    const dry = await adminRequest<{ count: number; leftAlone: Record<string, number> }>(
      system,
      `${bulk}?dryRun=1`,
      { bearer: true, json: { action: 'accept-first', recordIds: [tiedId, clearId, aloneId] } },
    );
    expect(dry.body).toMatchObject({ count: 1, leftAlone: { tied: 2 } });
    const res = await adminRequest<BulkReviewOutcome>(system, bulk, {
      bearer: true,
      json: { action: 'accept-first', recordIds: [tiedId, clearId] },
    });
    expect(res.status).toBe(200);
    expect(Object.fromEntries(res.body.results.map((r) => [r.recordId, r.outcome]))).toEqual({
      [tiedId!]: 'tied',
      [clearId!]: 'linked',
    });
    // "Accept the first candidate" of one record alone is the same path: a tie stays for a person.
    const single = await adminRequest<BulkReviewOutcome>(system, bulk, {
      bearer: true,
      json: { action: 'accept-first', recordIds: [aloneId] },
    });
    expect(single.body.results).toEqual([
      { recordId: aloneId, outcome: 'tied', slug: null, status: 'needs_review' },
    ]);
    expect(single.body.done).toBe(0);
    for (const r of [tiedId!, aloneId!]) {
      expect(await system.ctx.index.statusOf(system.installationId, r)).toBe('needs_review');
    }
    // A person's explicit pick of a tied candidate is taken.
    const pick = await adminRequest<{ status: string }>(
      system,
      `/admin/api/installations/${system.installationId}/review/${aloneId}`,
      { bearer: true, json: { action: 'accept', slug: published[5]! } },
    );
    expect(pick.status, pick.text).toBe(200);
    expect(await system.ctx.index.statusOf(system.installationId, aloneId!)).toBe('matched');
  });

  it('a storm under way shows on the installation page with its coalescing delay', async () => {
    const path = `/admin/installations/${system.installationId}`;
    const quiet = await adminRequest(system, path, { bearer: true });
    expect(quiet.text).not.toContain('data-storm');
    const [slug] = system.sandbox.listReports().filter((r) => r.published);
    const pending = system.ctx.pipeline.pendingSlugs;
    await pending.mark(system.installationId, slug!.slug, 'hot');
    try {
      const page = await adminRequest(system, path, { bearer: true });
      expect(page.text).toMatch(
        /<li data-storm>1 report changes again and again \(a storm\): its score changes are gathered and written to the records at most once every 5 s\.<\/li>/,
      );
    } finally {
      await pending.done(system.installationId, 'hot', await pending.take(system.installationId, 'hot', 10));
    }
  });

  it('/metrics counts installations by CRM and status, pending and disconnected included', async () => {
    const other = await system.ctx.installations.upsert({
      crm: crmKind(crm),
      externalId: 'metrics-pending',
      mode: 'oauth',
      tokens: { accessToken: 'unused' },
    });
    try {
      // The gauges are re-read by one loop (every second in the test system), not by the scrape.
      const text = await waitFor('the metrics loop to count the new installation', async () => {
        const scraped = await (await fetch(`${system.appUrl}/metrics`)).text();
        return scraped.includes(`report_connector_installations{crm="${crm}",status="pending"} 1`)
          ? scraped
          : undefined;
      });
      expect(text).toContain(`report_connector_installations{crm="${crm}",status="connected"} 1`);
      expect(text).toContain(`report_connector_installations{crm="${crm}",status="disconnected"} 0`);
    } finally {
      await system.ctx.installations.retire(other.id);
      await system.ctx.installations.remove(other.id);
    }
  });

  it('answers 404 to unlinking a record nobody knows and to undoing a run that does not exist', async () => {
    const base = `/admin/api/installations/${system.installationId}`;
    const before = await system.ctx.decisions.count(system.installationId);
    const unlink = await adminRequest(system, `${base}/records/999999999/unlink`, { bearer: true, json: {} });
    expect(unlink).toMatchObject({ status: 404, body: { code: 'RECORD_NOT_FOUND' } });
    const undo = await adminRequest(system, `${base}/runs/full-nobody-0-000000/undo`, {
      bearer: true,
      json: {},
    });
    expect(undo).toMatchObject({ status: 404, body: { code: 'RUN_NOT_FOUND' } });
    expect(await system.ctx.decisions.count(system.installationId)).toBe(before);
  });

  it('answers 404 for a record nobody knows, a malformed id and an unknown installation', async () => {
    const base = `/admin/api/installations/${system.installationId}/records`;
    expect((await adminRequest(system, `${base}/999999999`, { bearer: true })).status).toBe(404);
    expect((await adminRequest(system, `${base}/not%20an%20id`, { bearer: true })).status).toBe(404);
    expect(
      (await adminRequest(system, `/admin/api/installations/${crm}-nobody/records/1`, { bearer: true }))
        .status,
    ).toBe(404);
  });
});
