import { describe, expect, it } from 'vitest';
import type { InstallationView } from '../src/admin/overview.js';
import { collectStatus } from '../src/cli/commands/status.js';
import { suiteSystem } from './support/local-system.js';
import { runEnded } from './support/system-state.js';
import { waitFor } from './support/wait.js';

/**
 * Issue 17, "sandbox keys never write to production", end to end on both CRMs against the local system. Its
 * report key is a sandbox key (`me { sandbox: true }`, fixture data). Against a test portal / sandbox org
 * (the stand-ins' default) it writes as ever; once the CRM says it is production, no record is written, the
 * installation says why (admin API, `status`) and the run stops with the reason; an operator's allowance lets
 * the next sync write.
 */

describe.each(['hubspot', 'salesforce'] as const)('fixture scores and a production %s', (crm) => {
  const system = suiteSystem({ crm, companies: 30, logLevel: 'silent' });

  const api = async <T>(path: string, init: RequestInit = {}): Promise<{ status: number; body: T }> => {
    const res = await fetch(`${system.appUrl}/admin/api${path}`, {
      ...init,
      headers: {
        authorization: `Bearer ${system.ctx.config.adminToken}`,
        'content-type': 'application/json',
      },
    });
    return { status: res.status, body: (await res.json()) as T };
  };

  /** The CRM's own record of one linked company, and a score its report does not have yet. */
  const linked = () => {
    const record = system.recordIds.map((id) => system.crm.record(id)!).find((r) => r.status === 'matched')!;
    return { record, next: (system.sandbox.getReport(record.slug!)?.score.overall ?? 0) + 1.25 };
  };

  const makeProduction = (production: boolean) => {
    if (crm === 'hubspot') system.hubspot.setAccountType(production ? 'STANDARD' : 'DEVELOPER_TEST');
    else system.salesforce!.setIsSandbox(!production);
    system.ctx.runtime.forget(system.installationId);
  };

  it('a test portal / sandbox org is written as ever', async () => {
    const first = await runEnded(system);
    expect(first.state).toBe('done');
    expect(linked().record.score).not.toBeNull();
    expect((await system.ctx.installations.get(system.installationId))?.fixtureRefusal).toBeUndefined();
  });

  it('a production CRM gets no fixture score, says why, and writes once an operator allows it', async () => {
    makeProduction(true);
    const { record, next } = linked();
    const before = system.crm.record(record.id)!;

    // A score change arrives and a full sync is asked for: neither may write.
    system.sandbox.updateReport(record.slug!, { score: { overall: next } });
    const sync = await api<{ runId: string }>(`/installations/${system.installationId}/sync`, {
      method: 'POST',
      body: JSON.stringify({ full: true }),
    });
    expect(sync.status).toBe(202);
    const stopped = await runEnded(system, sync.body.runId);
    expect(stopped.state).toBe('stopped');
    expect(stopped.stoppedReason).toMatch(/fixture scores refused: the report-service key is a sandbox key/);

    const view = await api<InstallationView>(`/installations/${system.installationId}`);
    expect(view.body.fixtureRefusal).toMatch(/production/);
    const status = await collectStatus(system.ctx);
    expect(status.installations.find((i) => i.id === system.installationId)?.fixtureRefusal).toMatch(
      /sandbox key/,
    );
    const after = system.crm.record(record.id)!;
    expect(after.score).toBe(before.score);
    expect(after.syncedAt).toBe(before.syncedAt);

    const allowed = await api<{ allowFixtureWrites: boolean; runId: string }>(
      `/installations/${system.installationId}/fixture-writes`,
      { method: 'POST', body: JSON.stringify({ allow: true }) },
    );
    expect(allowed.body.allowFixtureWrites).toBe(true);
    expect((await runEnded(system, allowed.body.runId)).state).toBe('done');
    await waitFor(
      'the allowed write',
      () => (system.crm.record(record.id)?.score === next ? true : undefined),
      30_000,
      100,
    );
    expect((await system.ctx.installations.get(system.installationId))?.fixtureRefusal).toBeUndefined();
  }, 120_000);

  it('answers 400 to a setting that is not true or false', async () => {
    const res = await api<{ code: string }>(`/installations/${system.installationId}/fixture-writes`, {
      method: 'POST',
      body: JSON.stringify({ allow: 'yes' }),
    });
    expect(res.status).toBe(400);
  });
});
