import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoCompanies, type SeedCompanyInput } from '../local/demo-seed.js';
import type { LocalSystem } from '../local/system.js';
import { loadFixtureReports } from '../src/sandbox/index.js';
import { startTestSystem, stopTestSystem } from './support/local-system.js';
import { realtimeIdle } from './support/realtime-idle.js';
import { recordLinked, runEnded } from './support/system-state.js';
import { waitFor } from './support/wait.js';
import { buildWorkerCli, sharedSecretsEnv, WorkerProcess, workerEnvFor } from './support/worker-process.js';

/**
 * The two loops the report service's write side and alerts close, end to end on each CRM, with the workers
 * in a separate `report-connector worker` process: a company without a report is requested through the admin
 * API (a read-only key is refused first, changing nothing), the worker is killed and replaced while the report
 * is being written, the sandbox publishes it and sends `report.completed`, and the record ends linked and
 * scored. Then an `alert.fired` reaches every record linked to its report, once each, with an activity when
 * switched on, and malformed alerts are acknowledged, not retried.
 */

/** A company no fixture report describes: it stays `no_match` until a report is requested for it. */
const UNKNOWN: SeedCompanyInput = {
  name: 'Brackwater Tidal Instruments',
  domain: 'brackwater-tidal.example',
  country: 'Norway',
  city: 'Tromsø',
  industry: 'Marine Technology',
  slug: null,
  expected: { status: 'no_match' },
};

/** How long a change may take to reach the CRM here (the real-time path, on a shared test machine). */
const REALTIME_MS = 15_000;

let bin: string;
beforeAll(async () => {
  bin = await buildWorkerCli();
}, 180_000);

describe.each(['hubspot', 'salesforce'] as const)('%s: request a report, then alerts', (crm) => {
  let system: LocalSystem;
  let worker: WorkerProcess | undefined;
  let recordId: string;
  let submissionId: string;
  let publishedSlug: string;

  const admin = async (path: string, init: { method?: string; json?: unknown; body?: FormData } = {}) => {
    const headers: Record<string, string> = { authorization: `Bearer ${system.ctx.config.adminToken}` };
    let body: string | FormData | undefined = init.body;
    if (init.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(init.json);
    }
    const res = await fetch(`${system.appUrl}/admin/api${path}`, {
      method: init.method ?? 'GET',
      headers,
      body,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const requestPath = () =>
    `/installations/${encodeURIComponent(system.installationId)}/records/${encodeURIComponent(recordId)}/request`;

  beforeAll(async () => {
    const companies = [...demoCompanies(loadFixtureReports(), 30), UNKNOWN];
    system = await startTestSystem({ crm, companies, workers: 0, env: sharedSecretsEnv() });
    worker = await WorkerProcess.start(bin, workerEnvFor(system));
    await runEnded(system);
    recordId = system.recordIds[companies.length - 1]!;
    expect(system.crm.record(recordId)?.status).toBe('no_match');
  }, 180_000);

  afterAll(async () => {
    await worker?.kill();
    await stopTestSystem(system);
  });

  it('refuses a read-only key with what to do, and changes nothing', async () => {
    expect(
      (
        await admin(`/installations/${system.installationId}/key`, {
          method: 'POST',
          json: { apiKey: 'sk_sandbox_read' },
        })
      ).status,
    ).toBe(200);
    const before = system.sandbox.listSubmissions().length;
    const refused = await admin(requestPath(), { method: 'POST', json: {} });
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe('REPORTS_WRITE_SCOPE_MISSING');
    expect(refused.body.missingScope).toBe('write');
    expect(String(refused.body.error)).toContain('`write` scope');
    expect(String(refused.body.error)).toMatch(
      /create a key with the `write` scope in the report service's account settings/,
    );
    expect(system.sandbox.listSubmissions().length).toBe(before);
    expect(system.crm.record(recordId)?.status).toBe('no_match');
    expect(await system.ctx.requests.get(system.installationId, recordId)).toBeNull();
    expect(
      (
        await admin(`/installations/${system.installationId}/key`, {
          method: 'POST',
          json: { apiKey: 'sk_sandbox_write' },
        })
      ).status,
    ).toBe(200);
  });

  it('requests a report with a document; the record shows requested; a second request returns the first', async () => {
    const form = new FormData();
    form.append(
      'document',
      new Blob(['Brackwater makes tide gauges.'], { type: 'text/plain' }),
      'profile.txt',
    );
    const made = await admin(requestPath(), { method: 'POST', body: form });
    expect(made.status).toBe(202);
    expect(made.body.existing).toBe(false);
    submissionId = String(made.body.submissionId);
    const sent = system.sandbox.getSubmission(submissionId);
    expect(sent?.content).toMatchObject({
      name: UNKNOWN.name,
      domain: UNKNOWN.domain,
      country: UNKNOWN.country,
      city: UNKNOWN.city,
      industry: UNKNOWN.industry,
      reference: recordId,
    });
    expect(sent?.documents[0]?.content).toMatchObject({
      filename: 'profile.txt',
      content_type: 'text/plain',
    });
    expect(system.crm.record(recordId)?.status).toBe('requested');

    const again = await admin(requestPath(), { method: 'POST', json: {} });
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ submissionId, existing: true });
    expect(system.sandbox.listSubmissions().filter((s) => s.content.reference === recordId)).toHaveLength(1);
    const pending = await admin(`/installations/${system.installationId}/requests`);
    expect(pending.body.requests).toEqual([
      expect.objectContaining({ recordId, submissionId, name: UNKNOWN.name, ageSeconds: expect.any(Number) }),
    ]);
  });

  it('loses nothing when the worker is killed and replaced before the report is published', async () => {
    await worker?.kill();
    // Published while no worker runs: the event is queued by the server and waits in Redis.
    const published = system.sandbox.publishSubmission(submissionId, {
      score: { overall: 71.25, band: 'moderate' },
    });
    publishedSlug = published.report.slug;
    expect(published.events[0]).toMatchObject({
      type: 'report.completed',
      data: { slug: publishedSlug, submission_id: submissionId },
    });
    await system.sandbox.waitForDeliveries();
    expect(system.sandbox.deliveries.find((d) => d.id === published.events[0]!.id)?.status).toBe('delivered');
    expect(system.crm.record(recordId)?.status).toBe('requested');

    worker = await WorkerProcess.start(bin, workerEnvFor(system));
    const linked = await recordLinked(
      system,
      recordId,
      'the requested record linked and scored',
      REALTIME_MS,
      100,
    );
    expect(linked.slug).toBe(publishedSlug);
    expect(linked.score).toBe(71.25);
    expect(linked.band).toBe('moderate');
    // The request ends right after the record is written.
    const ended = await waitFor(
      'the request to end',
      async () => {
        const r = await system.ctx.requests.get(system.installationId, recordId);
        return r?.state === 'pending' ? undefined : r;
      },
      REALTIME_MS,
      50,
    );
    expect(ended).toMatchObject({ state: 'linked', slug: publishedSlug });
    expect((await admin(`/installations/${system.installationId}/requests`)).body.requests).toEqual([]);
  });

  it('puts an alert on every record linked to its report, once each, with one activity per record', async () => {
    // A report several seeded companies link to, plus the requested one's report.
    const bySlug = new Map<string, string[]>();
    for (const id of system.recordIds) {
      const r = system.crm.record(id);
      if (r?.status === 'matched' && r.slug) bySlug.set(r.slug, [...(bySlug.get(r.slug) ?? []), id]);
    }
    const [slug, linked] = [...bySlug].sort((a, b) => b[1].length - a[1].length)[0]!;
    expect(
      (
        await admin(`/installations/${system.installationId}/alert-activity`, {
          method: 'POST',
          json: { on: true },
        })
      ).body,
    ).toEqual({ alertActivity: true });
    const syncedBefore = new Map(linked.map((id) => [id, system.crm.record(id)?.syncedAt]));

    const event = system.sandbox.emitEvent('alert.fired', {
      slug,
      kind: 'score_drop',
      title: 'Score fell',
      message: 'The overall score dropped 9 points',
      severity: 'high',
    });
    const line = 'High alert, score drop: Score fell — The overall score dropped 9 points';
    await waitFor(
      'the alert on every linked record',
      () => (linked.every((id) => system.crm.record(id)?.alert === line) ? true : undefined),
      REALTIME_MS,
      100,
    );
    for (const id of linked) {
      expect(Date.parse(system.crm.record(id)!.alertAt!)).toBe(Date.parse(event.created_at));
      expect(system.crm.record(id)?.syncedAt).not.toBe(syncedBefore.get(id));
    }
    const activities = (id: string) =>
      crm === 'hubspot' ? system.hubspot.notesFor(id).length : system.salesforce!.org.tasksFor(id).length;
    await waitFor(
      'one activity per linked record',
      () => (linked.every((id) => activities(id) === 1) ? true : undefined),
      REALTIME_MS,
      100,
    );
    // The same alert delivered again (a sender's retry) neither writes nor adds an activity.
    await system.sandbox.waitForDeliveries();
    const after = new Map(linked.map((id) => [id, system.crm.record(id)?.syncedAt]));
    const requestedBefore = system.crm.record(recordId)?.alert;
    expect(requestedBefore).toBeNull();
    // Nothing left on the realtime queue, twice in a row (the Salesforce poll keeps the schedule queue busy).
    await realtimeIdle(system, { looks: 2, timeoutMs: REALTIME_MS, everyMs: 200 });
    for (const id of linked) {
      expect(system.crm.record(id)?.syncedAt).toBe(after.get(id));
      expect(activities(id)).toBe(1);
    }
  });

  it('acknowledges malformed alerts at once and records them, without retries', async () => {
    const before = system.sandbox.deliveries.length;
    const odd = [
      system.sandbox.emitEvent('alert.fired', { title: 'No slug at all' }),
      system.sandbox.emitEvent('alert.fired', {
        slug: publishedSlug,
        severity: { nested: ['x'] },
        extra: [1, 2],
      }),
    ];
    await system.sandbox.waitForDeliveries();
    const deliveries = system.sandbox.deliveries.slice(before);
    expect(deliveries.map((d) => [d.status, d.attempts])).toEqual([
      ['delivered', 1],
      ['delivered', 1],
    ]);
    const events = await system.ctx.events.recent(20);
    expect(events.find((e) => e.id === odd[0]!.id)).toMatchObject({ outcome: 'recorded', slug: null });
    // A slug with unreadable fields still updates its records, with the event type as the line.
    await waitFor(
      'the fallback line on the requested record',
      () => (system.crm.record(recordId)?.alert === 'alert.fired' ? true : undefined),
      REALTIME_MS,
      100,
    );
  });
});
