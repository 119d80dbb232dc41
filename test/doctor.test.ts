import { describe, expect, it } from 'vitest';
import { runCliOn } from './support/cli-run.js';
import { suiteSystem } from './support/local-system.js';

/**
 * `doctor` against a local Salesforce org: Redis, the report service and the installation pass; when Account is
 * private and the integration user has no View All, it warns that a backfill would be partial (without failing
 * the exit status), and the warning goes once the user is given View All on Account.
 */

interface DoctorReport {
  ok: boolean;
  checks: { name: string; ok: boolean; warn?: boolean; detail: string; fix?: string }[];
}

const system = suiteSystem({ crm: 'salesforce', companies: 5, firstSync: false, logLevel: 'silent' });

async function doctor(): Promise<{ code: number; report: DoctorReport }> {
  const { code, stdout } = await runCliOn(system, ['doctor', '--json']);
  return { code, report: JSON.parse(stdout) as DoctorReport };
}

describe('doctor on Salesforce', () => {
  it('warns when the integration user cannot see every Account, and not once it can', async () => {
    const readAccess = (r: DoctorReport) =>
      r.checks.find((c) => c.name === `${system.installationId} read access`);

    const open = await doctor();
    expect(open.report.checks.find((c) => c.name === 'Redis mode')).toMatchObject({
      ok: true,
      detail: 'one Redis (REDIS_URL)',
    });
    expect(readAccess(open.report)).toMatchObject({
      ok: true,
      detail: expect.stringMatching(/org-wide default/),
    });
    expect(readAccess(open.report)?.warn).toBeUndefined();

    system.salesforce!.setAccountVisibility('None', 'own');
    const partial = await doctor();
    expect(readAccess(partial.report)).toMatchObject({
      ok: true,
      warn: true,
      detail: expect.stringMatching(/sees only the Accounts shared with it/),
      fix: expect.stringMatching(/View All on Account/),
    });
    // A warning, not a failure: the exit status is what the other checks make it.
    expect(partial.code).toBe(open.code);

    system.salesforce!.setAccountVisibility('None', 'view-all-accounts');
    const granted = await doctor();
    expect(readAccess(granted.report)).toMatchObject({ ok: true, detail: 'View All on Account' });
    expect(readAccess(granted.report)?.warn).toBeUndefined();
  }, 120_000);
});
