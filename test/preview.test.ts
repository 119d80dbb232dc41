import { describe, expect, it } from 'vitest';
import type { LocalCrmRecord } from '../local/system.js';
import { MATCH_STATUSES, type MatchStatus } from '../src/fields.js';
import type { RunSummary } from '../src/storage/runs.js';
import { adminLogin } from './support/admin-login.js';
import { runCliOn } from './support/cli-run.js';
import { awaitingApproval, suiteSystem } from './support/local-system.js';
import { runEnded } from './support/system-state.js';

/**
 * Issue 17, "preview before the first write", end to end on both CRMs against the local system: a new
 * installation waiting for approval is previewed (matching runs, nothing is written to the CRM or kept in the
 * link index), then approved; the first write leaves exactly the counts the preview showed, and changes
 * exactly the records it said it would. A preview after the write says there is nothing left to write.
 */

describe.each(['hubspot', 'salesforce'] as const)('a preview on %s', (crm) => {
  const system = suiteSystem(
    { crm, companies: 40, firstSync: false, logLevel: 'silent' },
    { prepare: awaitingApproval },
  );

  const api = async <T>(path: string, init: RequestInit = {}): Promise<{ status: number; body: T }> => {
    const res = await fetch(`${system.appUrl}/admin/api/installations/${system.installationId}${path}`, {
      ...init,
      headers: {
        authorization: `Bearer ${system.ctx.config.adminToken}`,
        'content-type': 'application/json',
      },
    });
    return { status: res.status, body: (await res.json()) as T };
  };

  const records = (): LocalCrmRecord[] => system.recordIds.map((id) => system.crm.record(id)!);

  const crmCounts = (): Record<MatchStatus, number> => {
    const counts = Object.fromEntries(MATCH_STATUSES.map((s) => [s, 0])) as Record<MatchStatus, number>;
    for (const r of records()) {
      const status = MATCH_STATUSES.find((s) => s === r.status);
      if (status) counts[status] += 1;
    }
    return counts;
  };

  const preview = async (): Promise<RunSummary> => {
    const started = await api<{ runId: string }>('/preview', { method: 'POST' });
    expect(started.status).toBe(202);
    expect((await runEnded(system, started.body.runId)).state).toBe('done');
    const shown = await api<{ preview: RunSummary }>('/preview');
    expect(shown.status).toBe(200);
    expect(shown.body.preview.id).toBe(started.body.runId);
    return shown.body.preview;
  };

  it('answers 404 before any preview', async () => {
    const none = await api<{ code: string }>('/preview');
    expect(none.status).toBe(404);
    expect(none.body.code).toBe('NO_PREVIEW');
  });

  it('writes nothing, and the write that follows approval does what it showed', async () => {
    const before = records();
    const shown = await preview();

    // Nothing reached the CRM, and the link index holds nothing either.
    expect(records()).toEqual(before);
    const indexed = await Promise.all(
      system.recordIds.map((id) => system.ctx.index.statusOf(system.installationId, id)),
    );
    expect(indexed.every((s) => s === null)).toBe(true);
    expect((await system.ctx.installations.get(system.installationId))?.status).toBe('pending');

    expect(shown.totals.records).toBe(system.recordIds.length);
    expect(shown.totals.written).toBe(0);
    expect(shown.totals.statuses.matched).toBeGreaterThan(0);
    const sampled = new Set(shown.samples.map((s) => s.status));
    for (const s of MATCH_STATUSES) if (shown.totals.statuses[s] > 0) expect(sampled.has(s)).toBe(true);
    for (const sample of shown.samples.filter((s) => s.status === 'matched')) {
      expect(sample.slug).toBeTruthy();
    }

    const approved = await fetch(
      `${system.appUrl}/admin/api/installations/${system.installationId}/approve`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${system.ctx.config.adminToken}` },
      },
    );
    expect(approved.status).toBe(200);
    const { runId } = (await approved.json()) as { runId: string };
    const write = await runEnded(system, runId);
    expect(write.state).toBe('done');

    expect(write.totals.statuses).toEqual(shown.totals.statuses);
    expect(write.totals.written).toBe(shown.totals.wouldWrite);
    expect(crmCounts()).toEqual(shown.totals.statuses);
    for (const sample of shown.samples) {
      const record = system.crm.record(sample.recordId)!;
      expect({ status: record.status, slug: record.slug }).toEqual({
        status: sample.status,
        slug: sample.slug,
      });
    }
  }, 180_000);

  it('after the write, a preview finds nothing left to write', async () => {
    const before = records();
    const again = await preview();
    expect(again.totals.wouldWrite).toBe(0);
    expect(again.totals.statuses).toEqual(crmCounts());
    expect(records()).toEqual(before);
  }, 120_000);

  it('`sync --preview` prints the counts and samples and writes nothing', async () => {
    const before = records();
    const {
      code,
      stdout: printed,
      stderr,
    } = await runCliOn(system, ['sync', '--installation', system.installationId, '--preview']);
    expect(code, stderr).toBe(0);
    expect(printed).toContain(`Preview of ${system.installationId} (nothing was written)`);
    expect(printed).toContain('a write would change 0');
    expect(printed).toContain(`matched: ${crmCounts().matched}`);
    // Each sample line names a record and, for a linked one, the report it holds in the CRM.
    const sampleLines = printed.split('\n').filter((l) => l.includes(' -> '));
    expect(sampleLines.length).toBeGreaterThan(0);
    for (const line of sampleLines) {
      const [recordId] = line.trim().split(/\s+/);
      const record = system.crm.record(recordId!);
      if (record?.status === 'matched') expect(line.endsWith(`-> ${record.slug}`)).toBe(true);
    }
    expect(records()).toEqual(before);
  }, 120_000);

  it('the installation page starts a preview with its form and shows the counts and the write button', async () => {
    const { cookie } = await adminLogin(system);
    const pagePath = `${system.appUrl}/admin/installations/${system.installationId}`;
    const page = await (await fetch(pagePath, { headers: { cookie } })).text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page)![1]!;
    expect(page).toContain(`action="/admin/installations/${system.installationId}/preview"`);

    const started = await fetch(`${pagePath}/preview`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf }).toString(),
      redirect: 'manual',
    });
    expect(started.status).toBe(303);
    const [latest] = await system.ctx.runs.recent(system.installationId, 1);
    expect(latest?.kind).toBe('preview');
    await runEnded(system, latest!.id);

    const shown = await (await fetch(pagePath, { headers: { cookie } })).text();
    expect(shown).toContain('data-preview-state="done"');
    expect(shown).toMatch(
      new RegExp(`data-preview-status="matched">${crmCounts().matched.toLocaleString('en-US')}<`),
    );
    expect(shown).toContain('Start the write (full sync)');
  }, 120_000);
});
