import { describe, expect, it } from 'vitest';
import { InstallationService } from '../src/app/installation-service.js';
import { suiteSystem } from './support/local-system.js';
import { runEnded } from './support/system-state.js';

/**
 * An org with Person Accounts: a person who bears the exact name of a company with a published report is
 * never matched (nor written, nor indexed), while an Account of the same name that is a company goes through
 * matching as usual.
 */

const system = suiteSystem({ crm: 'salesforce', companies: 20, firstSync: false, logLevel: 'silent' });

describe('a Salesforce org with Person Accounts', () => {
  it('syncs its companies and never matches or writes a person', async () => {
    const sf = system.salesforce!;
    sf.enablePersonAccounts();
    const report = system.sandbox.listReports().find((r) => r.published)!;
    const [person] = sf.seedAccounts([{ Name: report.name, IsPersonAccount: true }]);
    const [company] = sf.seedAccounts([{ Name: report.name }]);

    const installation = (await system.ctx.installations.get(system.installationId))!;
    const { runId } = await new InstallationService(system.ctx).installed(installation);
    expect((await runEnded(system, runId)).state).toBe('done');

    // The company of the same name went through matching and was written (matched or sent to review); the
    // person never (matched, it would land in the review queue).
    expect(sf.getAccount(company!.Id)?.custom.Report_Match_Status__c ?? null).not.toBeNull();
    const untouched = sf.getAccount(person!.Id)!;
    expect(untouched.custom.Report_Slug__c ?? null).toBeNull();
    expect(untouched.custom.Report_Match_Status__c ?? null).toBeNull();
    expect(await system.ctx.index.slugs.recordsForSlug(system.installationId, report.slug)).not.toContain(
      person!.Id,
    );
  });
});
