import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HUBSPOT_COMPANY_OBJECT_TYPE_ID } from '../connectors/hubspot/provider.js';
import type { LocalSystem } from '../local/system.js';
import type { BulkReviewOutcome } from '../src/admin/admin-actions.js';
import type { CrmKind } from '../src/crm/connector.js';
import type { Decision } from '../src/decisions/decision-log.js';
import type { ReviewItem } from '../src/storage/review-codec.js';
import { topTied } from '../src/storage/review-ties.js';
import {
  type AdminAnswer,
  type AdminApiError,
  type AdminRequest,
  adminRequest,
} from './support/admin-api.js';
import { adminLogin } from './support/admin-login.js';
import { startTestSystem, stopTestSystem } from './support/local-system.js';
import { queuesIdle, runEnded } from './support/system-state.js';
import { waitFor } from './support/wait.js';

/**
 * Review at scale, the decision log, the CSV exports, unlink / re-match / undo from the page (issue 17), end
 * to end on each CRM against the local system: every decision is checked on the local CRM's record, and the
 * bulk writes are counted on HubSpot.
 */

/** Calls the admin API with the bearer token, unless a call brings a cookie or authorization of its own. */
function client(system: LocalSystem) {
  return <T = AdminApiError>(path: string, o: AdminRequest = {}): Promise<AdminAnswer<T>> =>
    adminRequest<T>(system, path, { ...o, bearer: true });
}

/** Parses the connector's CSV (RFC 4180) back into rows, quotes and doubled quotes included. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(cell);
      cell = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += ch;
  }
  return rows;
}

describe.each(['hubspot', 'salesforce'] as CrmKind[])('review at scale on %s', (crm) => {
  let system: LocalSystem;
  let id: string;
  let call: ReturnType<typeof client>;
  const api = (suffix: string) => `/admin/api/installations/${id}${suffix}`;
  const review = async () => (await call<{ items: ReviewItem[] }>(api('/review'))).body.items;
  const decisions = async () =>
    (await call<{ decisions: Decision[] }>(api('/decisions?limit=1000'))).body.decisions;

  beforeAll(async () => {
    system = await startTestSystem({ crm, companies: 300 });
    id = system.installationId;
    call = client(system);
    await runEnded(system);
  }, 180_000);

  afterAll(async () => {
    await stopTestSystem(system);
  });

  it('accepts the first candidate of many review items in one request, written in batches', async () => {
    // Records whose first candidate nothing puts ahead of the next are left to a person (review-ties.test.ts).
    const items = (await review()).filter((i) => i.candidates.length > 0 && !topTied(i));
    expect(items.length).toBeGreaterThanOrEqual(6);
    const chosen = items.slice(0, Math.ceil(items.length / 2));
    const untouched = items.slice(chosen.length);
    if (crm === 'hubspot') system.hubspot.resetStats();

    const res = await call<BulkReviewOutcome>(api('/review/bulk'), {
      json: { action: 'accept-first', recordIds: chosen.map((i) => i.recordId) },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.done).toBe(chosen.length);
    for (const item of chosen) {
      const first = item.candidates[0]!;
      expect(res.body.results).toContainEqual({
        recordId: item.recordId,
        outcome: 'linked',
        slug: first.slug,
        status: 'matched',
      });
      expect(system.crm.record(item.recordId), item.recordId).toMatchObject({
        slug: first.slug,
        status: 'matched',
        linkSource: 'admin',
      });
    }
    // One batch write for the lot (the CRM's batch size is 100 on HubSpot), not one call per record; one
    // decision at a time costs a write per record and more (the link, then the report's fields).
    if (crm === 'hubspot') {
      const { writes } = system.hubspot.stats();
      expect(writes.records).toBe(chosen.length);
      expect(writes.batches).toBe(Math.ceil(chosen.length / 100));
      const single = untouched.pop()!;
      system.hubspot.resetStats();
      const one = await call(api(`/review/${single.recordId}`), {
        json: { action: 'accept', slug: single.candidates[0]!.slug },
      });
      expect(one.status).toBe(200);
      console.info(
        `bulk: ${chosen.length} records in ${writes.batches} write call(s); single: 1 record in ${system.hubspot.stats().writes.batches}`,
      );
      expect(system.hubspot.stats().writes.batches).toBeGreaterThanOrEqual(1);
    }
    const left = new Set((await review()).map((i) => i.recordId));
    for (const item of chosen) expect(left.has(item.recordId)).toBe(false);
    for (const item of untouched) {
      expect(left.has(item.recordId)).toBe(true);
      expect(system.crm.record(item.recordId)?.status).toBe('needs_review');
    }

    const logged = (await decisions()).filter((d) => d.action === 'accept' && d.bulk);
    expect(logged).toHaveLength(chosen.length);
    for (const item of chosen) {
      const entry = logged.find((d) => d.recordId === item.recordId)!;
      expect(entry).toMatchObject({
        bulk: true,
        slug: item.candidates[0]!.slug,
        by: { kind: 'admin-token', id: null },
        evidence: { offered: item.candidates.length },
      });
      expect(entry.evidence.candidates).toEqual([
        {
          slug: item.candidates[0]!.slug,
          score: item.candidates[0]!.score ?? null,
          why: item.candidates[0]!.why ?? null,
        },
      ]);
      expect(Date.parse(entry.at)).toBeGreaterThan(Date.now() - 120_000);
    }
  }, 120_000);

  it('rejects many together; they stay no_match through a full sync; records not in review are left alone', async () => {
    const items = await review();
    expect(items.length).toBeGreaterThanOrEqual(3);
    const linked = system.recordIds.find((r) => system.crm.record(r)?.status === 'matched')!;
    const before = system.crm.record(linked)!;

    const res = await call<BulkReviewOutcome>(api('/review/bulk'), {
      json: { action: 'reject', recordIds: [...items.map((i) => i.recordId), linked] },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.done).toBe(items.length);
    expect(res.body.results).toContainEqual({
      recordId: linked,
      outcome: 'not_in_review',
      slug: null,
      status: 'matched',
    });
    expect(system.crm.record(linked)).toEqual(before);
    for (const item of items) {
      expect(system.crm.record(item.recordId), item.recordId).toMatchObject({
        slug: null,
        status: 'no_match',
        linkSource: 'admin',
      });
    }
    expect(await review()).toEqual([]);

    const runId = await system.ctx.pipeline.startSync(id, 'full');
    await runEnded(system, runId);
    for (const item of items) {
      expect(system.crm.record(item.recordId)?.status, item.recordId).toBe('no_match');
    }
    const rejected = (await decisions()).filter((d) => d.action === 'reject');
    expect(rejected.map((d) => d.recordId).sort()).toEqual(items.map((i) => i.recordId).sort());
    for (const d of rejected) {
      const item = items.find((i) => i.recordId === d.recordId)!;
      expect(d.evidence.candidates?.map((c) => c.slug)).toEqual(item.candidates.map((c) => c.slug));
    }
  }, 120_000);

  it('refuses a bad bulk request with 400 and writes nothing', async () => {
    for (const json of [
      { action: 'accept', recordIds: ['1'] },
      { action: 'reject', recordIds: [] },
      { action: 'reject', recordIds: Array.from({ length: 1001 }, (_, i) => String(i)) },
      { action: 'reject', recordIds: ['bad id'] },
    ]) {
      const res = await call(api('/review/bulk'), { json });
      expect(res.status, JSON.stringify(json).slice(0, 80)).toBe(400);
      expect(res.body.code).toBe('BAD_REQUEST');
    }
  });

  it('exports the review queue and the decision log as CSV downloads', async () => {
    const queue = await call(api('/review.csv'));
    expect(queue.status).toBe(200);
    expect(queue.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(queue.headers.get('content-disposition')).toMatch(
      new RegExp(`^attachment; filename="review-queue-${id}-\\d{4}-\\d{2}-\\d{2}\\.csv"$`),
    );
    expect(queue.headers.get('cache-control')).toBe('no-store');
    expect(parseCsv(queue.text)[0]).toContain('candidate_slug');

    const log = await call(api('/decisions.csv'));
    expect(log.status).toBe(200);
    expect(log.headers.get('content-disposition')).toMatch(
      new RegExp(`^attachment; filename="decisions-${id}-\\d{4}-\\d{2}-\\d{2}\\.csv"$`),
    );
    const [header, ...rows] = parseCsv(log.text);
    expect(header).toEqual([
      'at',
      'action',
      'bulk',
      'record_id',
      'slug',
      'decided_by',
      'decided_by_id',
      'candidates',
      'candidates_offered',
      'previous_slug',
      'run_id',
      'decided_by_name',
      'mass_action_id',
    ]);
    const all = await decisions();
    expect(rows).toHaveLength(all.length);
    // Oldest first in the file, newest first in the API.
    expect(rows.map((r) => r[3])).toEqual(all.map((d) => d.recordId).reverse());
    expect(new Set(rows.map((r) => r[1]))).toEqual(new Set(['accept', 'reject']));
    expect(rows.every((r) => r[5] === 'admin-token')).toBe(true);

    expect((await call(api('/decisions.csv'), { headers: { authorization: 'Bearer nope' } })).status).toBe(
      401,
    );
  });

  it('unlinks, re-matches and undoes from the page forms, with the CSRF token, and logs the session', async () => {
    const { cookie, csrf } = await adminLogin(system);
    // Corrections and the decision log are on the installation's links page.
    const page = await call(`/admin/installations/${id}/links`, { headers: { cookie } });
    expect(page.text).toContain('id="corrections"');
    expect(page.text).toContain('id="decisions"');
    expect(page.text).toContain(`href="/admin/api/installations/${id}/decisions.csv"`);

    // A linked record the page lists with its own unlink button.
    const listed = [
      ...page.text.matchAll(/action="\/admin\/installations\/[^/]+\/records\/([^/]+)\/unlink"/g),
    ]
      .map((m) => m[1]!)
      .filter((r) => r !== 'by-id');
    expect(listed.length).toBeGreaterThan(0);
    const target = listed.find((r) => system.crm.record(r)?.linkSource === 'auto')!;
    expect(system.crm.record(target)?.status).toBe('matched');
    const slug = system.crm.record(target)!.slug;

    // Without the token the form is refused and nothing changes.
    const forged = await call(`/admin/installations/${id}/records/${target}/unlink`, {
      form: new URLSearchParams({}),
      headers: { cookie },
    });
    expect(forged.status).toBe(403);
    expect(system.crm.record(target)?.slug).toBe(slug);

    // A single unlink is shown first: the record and its slug, and a form that confirms it.
    const asked = await call(`/admin/installations/${id}/records/by-id/unlink`, {
      form: new URLSearchParams({ _csrf: csrf, recordId: target }),
      headers: { cookie },
    });
    expect(asked.status).toBe(200);
    expect(asked.text).toContain(`<code>${slug}</code>`);
    expect(asked.text).toContain('name="confirm" value="unlink"');
    expect(system.crm.record(target)?.slug).toBe(slug);
    const unlinked = await call(`/admin/installations/${id}/records/by-id/unlink`, {
      form: new URLSearchParams({
        _csrf: csrf,
        recordId: target,
        confirm: 'unlink',
        return: 'linked-page=2&x=1',
      }),
      headers: { cookie },
    });
    expect(unlinked.status).toBe(303);
    // Back to the links page where it was (known list places only), the message naming the record.
    expect(unlinked.headers.get('location')).toBe(
      `/admin/installations/${id}/links?linked-page=2&done=unlinked&record=${target}#done`,
    );
    expect(system.crm.record(target)).toMatchObject({ slug: null, status: 'no_match', linkSource: 'admin' });

    // The re-match lifts the admin's decision: matching links the same report again, as its own link.
    const rematched = await call(`/admin/installations/${id}/records/${target}/rematch`, {
      form: new URLSearchParams({ _csrf: csrf }),
      headers: { cookie },
    });
    expect(rematched.status).toBe(303);
    expect(system.crm.record(target)).toMatchObject({ slug, status: 'matched', linkSource: 'auto' });

    const [unlinkEntry, rematchEntry] = (await decisions()).filter((d) => d.recordId === target).reverse();
    expect(unlinkEntry).toMatchObject({
      action: 'unlink',
      bulk: false,
      slug: null,
      evidence: { previousSlug: slug },
    });
    expect(rematchEntry).toMatchObject({ action: 'rematch', slug });
    expect(unlinkEntry?.by.kind).toBe('admin-session');
    expect(unlinkEntry?.by.id).toMatch(/^[0-9a-f]{12}$/);
    // The session's id is never written to the log: a short hash of it only.
    expect(cookie).not.toContain(unlinkEntry!.by.id!);

    // Undo the first sync: its auto-links still standing are taken back, each one logged.
    const [first] = (await system.ctx.runs.recent(id, 20)).filter((r) => r.kind === 'initial');
    const stillAuto = system.recordIds.filter((r) => system.crm.record(r)?.linkSource === 'auto');
    // The form first answers the confirmation (count, first records), which posts again with the set's digest.
    const shown = await call(`/admin/installations/${id}/runs/${first!.id}/undo`, {
      form: new URLSearchParams({ _csrf: csrf }),
      headers: { cookie },
    });
    expect(shown.status).toBe(200);
    const confirm = /name="confirm" value="([^"]+)"/.exec(shown.text)![1]!;
    expect(shown.text).toContain(`${stillAuto.length - 1} records would change`);
    const undone = await call(`/admin/installations/${id}/runs/${first!.id}/undo`, {
      form: new URLSearchParams({ _csrf: csrf, confirm }),
      headers: { cookie },
    });
    expect(undone.status).toBe(303);
    expect(undone.headers.get('location')).toMatch(
      new RegExp(`^/admin/installations/${id}/links\\?done=mass&mass=m[a-z0-9]+#corrections$`),
    );
    const undoEntries = (await decisions()).filter((d) => d.action === 'undo');
    // The re-matched record holds the run's slug as an auto-link again, but an admin decided about it after
    // the run (issue 31): it is left alone, the rest are undone.
    expect(stillAuto).toContain(target);
    expect(undoEntries.map((d) => d.recordId).sort()).toEqual(stillAuto.filter((r) => r !== target).sort());
    expect(system.crm.record(target)).toMatchObject({ slug, linkSource: 'auto' });
    for (const d of undoEntries) {
      expect(d.evidence.runId).toBe(first!.id);
      expect(d.evidence.previousSlug).toBeTruthy();
      expect(system.crm.record(d.recordId)).toMatchObject({ slug: null, linkSource: 'admin' });
    }
  }, 120_000);

  it('a page form that cannot be done says why beside the form', async () => {
    const { cookie, csrf } = await adminLogin(system);
    const res = await call(`/admin/installations/${id}/records/by-id/unlink`, {
      form: new URLSearchParams({ _csrf: csrf, recordId: 'not a record' }),
      headers: { cookie },
    });
    expect(res.status).toBe(400);
    expect(res.text).toContain('id="corrections-error"');

    // The bulk form sent with nothing selected: said on the same review page, not an error page (issue 31).
    const none = await call(`/admin/installations/${id}/review/bulk`, {
      form: new URLSearchParams({ _csrf: csrf, action: 'accept-first', page: '2', per: '50' }),
      headers: { cookie },
    });
    expect(none.status).toBe(303);
    expect(none.headers.get('location')).toBe(
      `/admin/installations/${id}/review?page=2&per=50&done=review-bulk-empty#review`,
    );
  });

  it.runIf(crm === 'salesforce')(
    'logs a person clearing report_slug with the Salesforce user who made the change',
    async () => {
      const target = system.recordIds.find((r) => system.crm.record(r)?.status === 'matched')!;
      const slug = system.crm.record(target)!.slug;
      system.salesforce!.updateAccountAsPerson(target, { Report_Slug__c: null });
      const entry = await waitFor(
        'the person’s clear in the decision log',
        async () => (await decisions()).find((d) => d.recordId === target && d.action === 'clear'),
        30_000,
      );
      expect(entry).toMatchObject({
        slug: null,
        bulk: false,
        by: { kind: 'crm-user', id: system.salesforce!.personUserId },
        evidence: { previousSlug: slug },
      });
      await waitFor(
        'the clear to be written as the person’s',
        () => (system.crm.record(target)?.linkSource === 'person' ? true : undefined),
        30_000,
      );
    },
    60_000,
  );

  it.runIf(crm === 'hubspot')(
    'logs a person’s own change of report_slug with the CRM user who made it',
    async () => {
      const target = system.recordIds.find((r) => system.crm.record(r)?.status === 'no_match')!;
      const slug = system.sandbox.listReports().find((r) => r.published)!.slug;
      await system.hubspot.setCompanyProperty(target, 'report_slug', slug, { notify: true });
      const entry = await waitFor(
        'the person’s change in the decision log',
        async () => (await decisions()).find((d) => d.recordId === target && d.action === 'set'),
        30_000,
      );
      expect(entry).toMatchObject({ slug, bulk: false, by: { kind: 'crm-user', id: 'userId:7001' } });
      await queuesIdle(system);
      expect(system.crm.record(target)).toMatchObject({ slug, linkSource: 'person' });
      expect((await decisions()).filter((d) => d.recordId === target && d.action === 'set')).toHaveLength(1);

      // HubSpot also reports the connector's own writes as changes (an admin's link, an unlink): no decision.
      const admins = (await decisions()).filter((d) => d.action === 'accept' || d.action === 'unlink');
      const own = admins.map((d) => ({ recordId: d.recordId })).slice(0, 3);
      expect(own.length).toBeGreaterThan(0);
      const count = (await decisions()).length;
      await system.hubspot.notify(
        own.map((o, i) => ({
          eventId: 900_000 + i,
          subscriptionId: 1,
          portalId: Number(system.hubspot.portalId),
          appId: 1,
          occurredAt: Date.now(),
          subscriptionType: 'object.propertyChange',
          attemptNumber: 0,
          objectId: Number(o.recordId),
          objectTypeId: HUBSPOT_COMPANY_OBJECT_TYPE_ID,
          changeSource: 'INTEGRATION',
          propertyName: 'report_slug',
          propertyValue: system.crm.record(o.recordId)?.slug ?? '',
        })),
      );
      await queuesIdle(system);
      expect((await decisions()).length).toBe(count);
    },
    60_000,
  );
});
