import { afterEach, describe, expect, it } from 'vitest';
import type { LocalSalesforceOptions } from '../connectors/salesforce/local/index.js';
import { DEFAULT_API_VERSION } from '../connectors/salesforce/provider.js';
import { connectLocalSalesforce, localSalesforceAt } from './support/local-salesforce-connector.js';

/**
 * Person Accounts: in an org that has them, Account holds people beside companies. The connector asks the
 * org once (describe: is there `IsPersonAccount`?) and from then on never lists, reads, finds or polls a
 * person, so no person is matched against a company report. An org without them is queried as before (the
 * field does not exist there, and naming it would be INVALID_FIELD).
 */

const running: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

async function setup(options: LocalSalesforceOptions) {
  const { local, advance } = localSalesforceAt('2026-08-01T10:00:00Z', options);
  const connector = await connectLocalSalesforce(local, running);
  await connector.ensureFields();
  return { local, connector, advance };
}

describe('Person Accounts', () => {
  it('are left out of listing, reads, slug lookups and the change poll where the org has them', async () => {
    const { local, connector, advance } = await setup({ personAccounts: true });
    const [company, person, other] = local.seedAccounts([
      { Name: 'Acme Robotics', Website: 'https://acme.example', Report_Slug__c: 'acme' },
      { Name: 'Jane Acme', IsPersonAccount: true, Report_Slug__c: 'acme' },
      { Name: 'Globex', Website: 'https://globex.example' },
    ]);
    const listed = await connector.listCompanies(null);
    expect(listed.records.map((r) => r.id).sort()).toEqual([company!.Id, other!.Id].sort());
    expect((await connector.readCompanies([person!.Id, company!.Id])).map((r) => r.id)).toEqual([
      company!.Id,
    ]);
    expect((await connector.findBySlug('acme')).map((r) => r.id)).toEqual([company!.Id]);

    advance(2_000);
    const baseline = await connector.listChangedSince(null);
    advance(2_000);
    local.updateAccountAsPerson(person!.Id, { Name: 'Jane Acme-Smith' });
    local.updateAccountAsPerson(other!.Id, { Name: 'Globex Corporation' });
    advance(2_000);
    const changed = await connector.listChangedSince(baseline.cursor);
    expect(changed.records.map((r) => r.id)).toEqual([other!.Id]);
    // The org was described once for all of it.
    expect(local.counters()['describe.Account']).toBe(1);
  });

  it('an org without them is queried without the field', async () => {
    const { local, connector } = await setup({});
    const [company] = local.seedAccounts([{ Name: 'Initech' }]);
    expect((await connector.listCompanies(null)).records.map((r) => r.id)).toEqual([company!.Id]);
    expect(() =>
      local.org.query('SELECT Id FROM Account WHERE IsPersonAccount = false', {
        all: false,
        version: `v${DEFAULT_API_VERSION}`,
      }),
    ).toThrow(/IsPersonAccount/);
  });
});
