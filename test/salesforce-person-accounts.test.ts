import { afterEach, describe, expect, it } from 'vitest';
import {
  createSalesforceConnector,
  type SalesforceConnectorDeps,
} from '../connectors/salesforce/connector.js';
import { createLocalSalesforce, type LocalSalesforceOptions } from '../connectors/salesforce/local/index.js';
import { DEFAULT_API_VERSION } from '../connectors/salesforce/provider.js';
import type { AccessTokenSource } from '../src/auth/token-manager.js';
import type { RequestGate } from '../src/crm/request-gate.js';

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

const gate: RequestGate = { acquire: async () => {}, pause: async () => {} };

async function setup(options: LocalSalesforceOptions) {
  let now = Date.parse('2026-08-01T10:00:00Z');
  const local = createLocalSalesforce({ now: () => now, ...options });
  const server = await local.listen();
  running.push(server);
  const token = local.issueAccessToken();
  const tokens: AccessTokenSource = { current: async () => token, refreshAfterRejection: async () => token };
  const connector = createSalesforceConnector({
    installation: { id: `salesforce-${local.orgId}`, instanceUrl: server.url, externalId: local.orgId },
    tokens,
    gate,
    config: {
      salesforce: {
        apiVersion: DEFAULT_API_VERSION,
        usagePauseShare: 0.8,
      } as SalesforceConnectorDeps['config']['salesforce'],
    },
    retry: { baseDelayMs: 1, maxDelayMs: 2 },
    httpOptions: { retry: { maxRetries: 0 } },
  });
  await connector.ensureFields();
  return {
    local,
    connector,
    advance: (ms: number) => {
      now += ms;
    },
  };
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
