import { describe, expect, it } from 'vitest';
import { HUBSPOT_PROPERTY_NAMES } from '../connectors/hubspot/fields/field-names.js';
import { SALESFORCE_FIELD_NAMES } from '../connectors/salesforce/fields/field-names.js';
import type { LocalSystem } from '../local/system.js';
import type { CrmKind } from '../src/crm/connector.js';
import { FIELDS } from '../src/fields.js';
import { adminRequest } from './support/admin-api.js';
import { runCliOn } from './support/cli-run.js';
import { crmCalls, resetCalls } from './support/crm-calls.js';
import { awaitingApproval, suiteSystem } from './support/local-system.js';
import { runEnded } from './support/system-state.js';

/**
 * Issue 26, point 2: nothing changes a CRM before approval. `doctor` reports an installation nobody let in
 * without a single call to its CRM, and a preview of it reads the CRM but creates no field (a field the CRM
 * lacks reads as empty). On both CRMs, counting the stand-ins' calls. Then what `doctor` says plainly: WARN
 * for no webhook secret, no report key, no installation; the key's real scopes; FAIL and exit 1 when a check
 * fails.
 */

interface DoctorReport {
  ok: boolean;
  checks: { name: string; ok: boolean; warn?: boolean; detail: string; fix?: string }[];
}

async function doctor(
  system: LocalSystem,
  env: Record<string, string> = {},
  json = true,
): Promise<{ code: number; report: DoctorReport | null; text: string }> {
  const { code, stdout: text } = await runCliOn(system, json ? ['doctor', '--json'] : ['doctor'], env);
  return { code, report: json ? (JSON.parse(text) as DoctorReport) : null, text };
}

/** The connector's own fields the CRM has. */
function ownFields(s: LocalSystem, crm: CrmKind): string[] {
  const names =
    crm === 'hubspot' ? [...s.hubspot.store.properties.keys()] : [...s.salesforce!.org.customFields.keys()];
  const own = new Set(
    FIELDS.map((f) => (crm === 'hubspot' ? HUBSPOT_PROPERTY_NAMES : SALESFORCE_FIELD_NAMES)[f.key]),
  );
  return names.filter((n) => own.has(n));
}

/** The portal or org as a fresh one is: none of the connector's fields. */
function dropOwnFields(s: LocalSystem, crm: CrmKind): void {
  for (const field of FIELDS) {
    if (crm === 'hubspot') s.hubspot.store.properties.delete(HUBSPOT_PROPERTY_NAMES[field.key]);
    else s.salesforce!.org.customFields.delete(SALESFORCE_FIELD_NAMES[field.key]);
  }
}

describe.each(['hubspot', 'salesforce'] as CrmKind[])('on %s, an installation not let in yet', (crm) => {
  // Not let in, and no fields yet.
  const system = suiteSystem(
    { crm, companies: 12, firstSync: false, logLevel: 'silent' },
    {
      prepare: async (started) => {
        await awaitingApproval(started);
        dropOwnFields(started, crm);
        expect(ownFields(started, crm)).toEqual([]);
      },
    },
  );

  it('doctor reports it waiting for approval without calling its CRM', async () => {
    resetCalls(system, crm);
    const { report } = await doctor(system);
    expect(crmCalls(system, crm)).toEqual({});
    expect(ownFields(system, crm)).toEqual([]);
    const approval = report!.checks.find((c) => c.name === `${system.installationId} approval`);
    expect(approval).toMatchObject({
      ok: true,
      warn: true,
      detail: expect.stringMatching(/waiting for approval/),
    });
    expect(approval?.fix).toMatch(/approve/);
    expect(report!.checks.some((c) => c.name.startsWith(`${system.installationId} `) && c !== approval)).toBe(
      false,
    );
  }, 60_000);

  it('a preview reads its records and creates no field: the missing fields read as empty', async () => {
    resetCalls(system, crm);
    const started = await adminRequest<{ runId: string }>(
      system,
      `/admin/api/installations/${system.installationId}/preview`,
      { method: 'POST', bearer: true },
    );
    expect(started.status).toBe(202);
    const run = await runEnded(system, started.body.runId);
    expect(run.state).toBe('done');
    expect(run.totals.records).toBe(system.recordIds.length);
    expect(run.totals.statuses.matched).toBeGreaterThan(0);
    expect(ownFields(system, crm)).toEqual([]);
    const calls = Object.keys(crmCalls(system, crm));
    expect(calls.length).toBeGreaterThan(0);
    expect(
      calls.filter((route) =>
        /propert(y|ies)\.(create|update)|group|metadata|deploy|tooling|permission/i.test(route),
      ),
    ).toEqual([]);
    expect((await system.ctx.installations.get(system.installationId))?.status).toBe('pending');
  }, 120_000);
});

describe('doctor says plainly what is wrong', () => {
  const system = suiteSystem({ crm: 'hubspot', companies: 3, firstSync: false, logLevel: 'silent' });

  const find = (r: DoctorReport, name: string) => r.checks.find((c) => c.name === name);

  it('warns for an unset webhook secret and no report key, and reads the key’s real scopes', async () => {
    const bare = await doctor(system, { REPORTS_API_KEY: '', REPORTS_WEBHOOK_SECRET: '' });
    expect(find(bare.report!, 'Report webhooks')).toMatchObject({ ok: true, warn: true });
    expect(find(bare.report!, 'Report service (REPORTS_API_KEY)')).toMatchObject({
      ok: true,
      warn: true,
      detail: expect.stringMatching(/no report key/),
    });

    const writer = await doctor(system, { REPORTS_API_KEY: 'sk_sandbox_write' });
    expect(find(writer.report!, 'Report service (REPORTS_API_KEY)')).toMatchObject({
      ok: true,
      detail: expect.stringMatching(/scopes read and write/),
    });
    expect(find(writer.report!, 'Report service (REPORTS_API_KEY)')?.warn).toBeUndefined();

    const reader = await doctor(system, { REPORTS_API_KEY: 'sk_sandbox_read' });
    expect(find(reader.report!, 'Report service (REPORTS_API_KEY)')).toMatchObject({
      ok: true,
      warn: true,
      detail: expect.stringMatching(/read scope only/),
    });
    // The scope check wrote nothing at the service.
    expect(system.sandbox.listSubmissions()).toEqual([]);
  }, 60_000);

  it('warns when there is no installation', async () => {
    const empty = await doctor(system, { REDIS_PREFIX: `${system.ctx.config.redisPrefix}-none` });
    expect(find(empty.report!, 'Installations')).toMatchObject({
      ok: true,
      warn: true,
      detail: expect.stringMatching(/no installation/),
    });
  }, 60_000);

  it('prints FAIL lines and exits 1 when a check fails; WARN alone exits 0', async () => {
    const refused = await doctor(system, { REPORTS_API_KEY: 'sk_sandbox_revoked' }, false);
    expect(refused.code).toBe(1);
    expect(refused.text).toMatch(/^FAIL Report service \(REPORTS_API_KEY\): refused \(401\)/m);
    expect(refused.text).toMatch(/check(s)? failed/);

    const fine = await doctor(system, { REPORTS_API_KEY: 'sk_sandbox_write' }, false);
    expect(fine.code).toBe(0);
    expect(fine.text).toMatch(/^WARN Report webhooks/m);
    expect(fine.text).toMatch(/no check failed/);
  }, 60_000);
});
