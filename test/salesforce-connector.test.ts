import { afterEach, describe, expect, it } from 'vitest';
import { SalesforceApi } from '../connectors/salesforce/api/api-client.js';
import { SalesforceUsageTracker } from '../connectors/salesforce/api/usage.js';
import type { SalesforceConnector, SalesforceConnectorDeps } from '../connectors/salesforce/connector.js';
import { SALESFORCE_FIELDS } from '../connectors/salesforce/fields/field-names.js';
import { customFieldDefinition } from '../connectors/salesforce/fields/field-types.js';
import {
  createLocalSalesforce,
  type LocalSalesforce,
  type LocalSalesforceOptions,
} from '../connectors/salesforce/local/index.js';
import type { AccessTokenSource } from '../src/auth/token-manager.js';
import {
  CrmFieldsMissingError,
  CrmForbiddenError,
  CrmQuotaPausedError,
  CrmRateLimitedError,
  CrmTransientError,
  CrmUnauthorizedError,
} from '../src/crm/errors.js';
import type { RequestGate } from '../src/crm/request-gate.js';
import { localSalesforceConnector } from './support/local-salesforce-connector.js';

/**
 * The connector against the local Salesforce over real HTTP: jsforce runs unchanged, so these tests see the
 * same requests a real org would get. Tokens come from a small in-memory source here; the TokenManager path
 * (Redis, one refresh per org) is covered in salesforce-oauth.test.ts.
 */

class RecordingGate implements RequestGate {
  acquired = 0;
  pauses: number[] = [];
  async acquire() {
    this.acquired++;
  }
  async pause(ms: number) {
    this.pauses.push(ms);
  }
}

const running: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

interface Setup {
  local: LocalSalesforce;
  url: string;
  gate: RecordingGate;
  refreshes: string[];
  tokens: AccessTokenSource;
  connector(extra?: Partial<SalesforceConnectorDeps>): SalesforceConnector;
}

async function setup(options: LocalSalesforceOptions = {}): Promise<Setup> {
  const local = createLocalSalesforce({ queryPageSize: 50, ...options });
  const server = await local.listen();
  running.push(server);
  const gate = new RecordingGate();
  const refreshes: string[] = [];
  let token = local.issueAccessToken();
  const tokens: AccessTokenSource = {
    current: async () => token,
    refreshAfterRejection: async (rejected) => {
      refreshes.push(rejected);
      token = local.issueAccessToken();
      return token;
    },
  };
  return {
    local,
    url: server.url,
    gate,
    refreshes,
    tokens,
    connector: (extra = {}) =>
      localSalesforceConnector(
        local,
        server.url,
        { tokens, gate, apiVersion: '63.0' },
        { bulk: { pollIntervalMs: 5 }, ...extra },
      ),
  };
}

/** Creates the connector's fields directly in the org, without the permission set: field-level security bites. */
function createFieldsWithoutPermissionSet(local: LocalSalesforce) {
  for (const field of SALESFORCE_FIELDS) {
    const result = local.org.upsertCustomField(customFieldDefinition(field, 'metadataApi'));
    expect(result).toEqual({ created: true });
  }
}

describe('ensureFields', () => {
  it('creates every field with its Salesforce type, the permission set, and assigns it', async () => {
    const { local, connector } = await setup();
    const result = await connector().ensureFields();
    expect(result.created.sort()).toEqual(SALESFORCE_FIELDS.map((f) => f.salesforce).sort());
    expect(result.problems).toEqual([]);
    const defs = local.org.customFields;
    expect(defs.get('Report_Score__c')).toMatchObject({ type: 'Number', precision: 18, scale: 6 });
    expect(defs.get('Report_Verified_Score__c')).toMatchObject({ type: 'Number', precision: 18, scale: 6 });
    expect(defs.get('Report_Pillars__c')).toMatchObject({
      type: 'LongTextArea',
      length: 32768,
      visibleLines: 5,
    });
    expect(defs.get('Report_Scored_At__c')).toMatchObject({ type: 'DateTime' });
    expect(defs.get('Report_URL__c')).toMatchObject({ type: 'Url' });
    expect(defs.get('Report_Slug__c')).toMatchObject({ type: 'Text', length: 255 });
    expect(defs.get('Report_Match_Status__c')).toMatchObject({ type: 'Text', length: 32 });
    expect(local.isPermissionSetAssigned('Report_Connector')).toBe(true);
    expect(local.org.permissionSetFields('Report_Connector')).toEqual(
      SALESFORCE_FIELDS.map((f) => `Account.${f.salesforce}`).sort(),
    );
    // 11 fields in Metadata API batches of at most 10, then one more upsert for the permission set.
    expect(local.counters()['soap.upsertMetadata']).toBe(3);
    expect(local.counters()['soap.readMetadata']).toBe(2);
    expect(local.apiVersionsSeen()).toEqual(['v63.0']);
  });

  it('is idempotent: a second run writes no fields and tolerates the existing assignment', async () => {
    const { local, connector } = await setup();
    await connector().ensureFields();
    local.resetCounters();
    const again = await connector().ensureFields();
    expect(again.created).toEqual([]);
    expect(again.existing.sort()).toEqual(SALESFORCE_FIELDS.map((f) => f.salesforce).sort());
    expect(again.problems).toEqual([]);
    expect(local.counters()['soap.upsertMetadata']).toBe(1); // the permission set only
    expect(local.counters()['sobjects.PermissionSetAssignment']).toBe(1); // answered DUPLICATE_VALUE
  });

  it('corrects a field of the wrong type and reports it as reconciled', async () => {
    const { local, connector } = await setup();
    expect(
      local.org.upsertCustomField({
        fullName: 'Account.Report_Score__c',
        label: 'Score',
        type: 'Text',
        length: 20,
      }),
    ).toEqual({
      created: true,
    });
    const result = await connector().ensureFields();
    expect(result.reconciled).toEqual(['Report_Score__c']);
    expect(result.created).not.toContain('Report_Score__c');
    expect(local.org.customFields.get('Report_Score__c')).toMatchObject({
      type: 'Number',
      precision: 18,
      scale: 6,
    });
  });

  it('finds the integration user with one call to the Connect API', async () => {
    const { local, connector } = await setup({ userinfoAllowed: false });
    expect((await connector().ensureFields()).problems).toEqual([]);
    expect(local.isPermissionSetAssigned('Report_Connector')).toBe(true);
    expect(local.counters()['chatter.users.me']).toBe(1);
    expect(local.counters()['oauth.userinfo']).toBeUndefined();
  });

  it('falls back to userinfo when Chatter is off, and says what to do when both refuse', async () => {
    const chatterOff = await setup({ chatterEnabled: false });
    expect((await chatterOff.connector().ensureFields()).problems).toEqual([]);
    expect(chatterOff.local.isPermissionSetAssigned('Report_Connector')).toBe(true);

    const neither = await setup({ chatterEnabled: false, userinfoAllowed: false });
    const result = await neither.connector().ensureFields();
    expect(result.created).toHaveLength(SALESFORCE_FIELDS.length);
    expect(result.problems).toEqual([
      expect.stringMatching(
        /integration user could not be identified.*assign the permission set Report_Connector/,
      ),
    ]);
    expect(neither.local.isPermissionSetAssigned('Report_Connector')).toBe(false);
  });

  it('says which permissions are missing when the user may not change metadata', async () => {
    const { connector } = await setup({ canModifyMetadata: false });
    const err = await connector()
      .ensureFields()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrmForbiddenError);
    expect((err as Error).message).toMatch(/Modify Metadata/);
    expect((err as Error).message).toMatch(/manifests\/salesforce/);
  });
});

describe('reads', () => {
  it('pages through Accounts with queryMore and maps them', async () => {
    const { local, connector } = await setup();
    await connector().ensureFields();
    local.seedAccounts([
      {
        Name: 'Acme',
        Website: 'HTTPS://WWW.Acme.example/about',
        Industry: 'Retail',
        BillingCountry: 'France',
        BillingCity: 'Lyon',
      },
    ]);
    local.seedAccounts(119);
    local.resetCounters();
    const c = connector();
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await c.listCompanies(cursor);
      seen.push(...page.records.map((r) => r.id));
      cursor = page.nextCursor;
      pages++;
      if (pages === 1) {
        expect(page.records[0]).toMatchObject({
          name: 'Acme',
          domain: 'acme.example',
          industry: 'Retail',
          country: 'France',
          city: 'Lyon',
          fields: { slug: null, score: null, matchStatus: null },
        });
      }
    } while (cursor);
    expect(pages).toBe(3);
    expect(new Set(seen).size).toBe(120);
    expect(local.counters()).toMatchObject({ query: 1, queryMore: 2 });
  });

  it('reads the Shipping address when Billing is empty, never a mix of the two', async () => {
    const { local, connector } = await setup();
    await connector().ensureFields();
    const [shippingOnly, both, cityOnly] = local.seedAccounts([
      { Name: 'Shipping Only', ShippingCountry: 'Germany', ShippingCity: 'Hamburg' },
      {
        Name: 'Both',
        BillingCountry: 'France',
        BillingCity: 'Lyon',
        ShippingCountry: 'Germany',
        ShippingCity: 'Hamburg',
      },
      { Name: 'Billing City Only', BillingCity: 'Lyon', ShippingCountry: 'Germany', ShippingCity: 'Hamburg' },
    ]);
    const byId = new Map(
      (await connector().readCompanies([shippingOnly!.Id, both!.Id, cityOnly!.Id])).map((r) => [r.id, r]),
    );
    expect(byId.get(shippingOnly!.Id)).toMatchObject({ country: 'Germany', city: 'Hamburg' });
    expect(byId.get(both!.Id)).toMatchObject({ country: 'France', city: 'Lyon' });
    // Billing names a city: that address is the one, even without its country.
    expect(byId.get(cityOnly!.Id)).toMatchObject({ country: null, city: 'Lyon' });
  });

  it('with country picklists on, reads the ISO code (Billing, else Shipping); without them never asks for it', async () => {
    const on = await setup({ countryPicklists: true });
    await on.connector().ensureFields();
    const [renamed, shippingOnly, noCode] = on.local.seedAccounts([
      // An org may relabel a picklist value; its code stays what every org agrees on.
      {
        Name: 'Relabelled',
        BillingCountry: 'Federal Republic',
        BillingCountryCode: 'DE',
        BillingCity: 'Bonn',
      },
      // A bare code that reads as a US state too (Georgia): handed on as the country's name.
      {
        Name: 'Shipping Only',
        ShippingCountry: 'Sakartvelo',
        ShippingCountryCode: 'GE',
        ShippingCity: 'Tbilisi',
      },
      { Name: 'Name Only', BillingCountry: 'Austria', BillingCity: 'Graz' },
    ]);
    const byId = new Map(
      (await on.connector().readCompanies([renamed!.Id, shippingOnly!.Id, noCode!.Id])).map((r) => [r.id, r]),
    );
    expect(byId.get(renamed!.Id)).toMatchObject({ country: 'Germany', city: 'Bonn' });
    expect(byId.get(shippingOnly!.Id)).toMatchObject({ country: 'Georgia', city: 'Tbilisi' });
    expect(byId.get(noCode!.Id)).toMatchObject({ country: 'Austria', city: 'Graz' });

    // Without the picklists the code fields do not exist: selecting them would fail the whole query.
    const off = await setup();
    await off.connector().ensureFields();
    const [plain] = off.local.seedAccounts([{ Name: 'Plain', BillingCountry: 'Spain', BillingCity: 'Vigo' }]);
    expect(await off.connector().readCompanies([plain!.Id])).toMatchObject([
      { country: 'Spain', city: 'Vigo' },
    ]);
  });

  it('tells whether the integration user reads every Account (org-wide default, View All, View All Data)', async () => {
    const publicOrg = await setup();
    expect(await publicOrg.connector().readAccess()).toMatchObject({ complete: true });

    const privateOrg = await setup({ accountSharing: 'None' });
    const partial = await privateOrg.connector().readAccess();
    expect(partial.complete).toBe(false);
    expect(partial.detail).toMatch(/neither View All on Account nor View All Data/);

    const viewAll = await setup({ accountSharing: 'None', integrationUserAccess: 'view-all-accounts' });
    expect(await viewAll.connector().readAccess()).toEqual({ complete: true, detail: 'View All on Account' });
    const allData = await setup({ accountSharing: 'None', integrationUserAccess: 'view-all-data' });
    expect(await allData.connector().readAccess()).toMatchObject({
      complete: true,
      detail: expect.stringMatching(/View All Data/),
    });
  });

  it('continues by Id when the query locator has expired', async () => {
    const { local, connector } = await setup();
    await connector().ensureFields();
    local.seedAccounts(120);
    const c = connector();
    const first = await c.listCompanies(null);
    local.expireQueryLocators();
    const ids = first.records.map((r) => r.id);
    let cursor = first.nextCursor;
    while (cursor) {
      const page = await c.listCompanies(cursor);
      ids.push(...page.records.map((r) => r.id));
      cursor = page.nextCursor;
    }
    expect(ids).toHaveLength(120);
    expect(new Set(ids).size).toBe(120);
  });

  it('reads by id in chunks, accepts 15-character ids and leaves out what does not exist', async () => {
    const { local, connector } = await setup();
    await connector().ensureFields();
    const accounts = local.seedAccounts(450);
    local.deleteAccount(accounts[1]!.Id);
    local.resetCounters();
    const wanted = [
      accounts[0]!.Id.slice(0, 15),
      accounts[1]!.Id,
      "x' OR Name != '",
      ...accounts.slice(2).map((a) => a.Id),
    ];
    const records = await connector().readCompanies(wanted);
    expect(records).toHaveLength(449);
    expect(records[0]!.id).toBe(accounts[0]!.Id);
    expect(records.map((r) => r.id)).not.toContain(accounts[1]!.Id);
    expect(local.counters().query).toBe(3); // 449 valid ids in IN lists of 200
  });

  it('finds Accounts by slug with quotes and backslashes in it, exactly', async () => {
    const { local, connector } = await setup();
    await connector().ensureFields();
    const slug = "o'brien\\co' OR Name != '";
    const [a, b] = local.seedAccounts(2);
    local.updateAccountAsPerson(a!.Id, { Report_Slug__c: slug });
    local.updateAccountAsPerson(b!.Id, { Report_Slug__c: 'other' });
    const found = await connector().findBySlug(slug);
    expect(found.map((r) => r.id)).toEqual([a!.Id]);
    expect(found[0]!.fields.slug).toBe(slug);
  });

  it('finds Accounts by part of the name, quotes, backslashes, % and _ matching themselves (issue 31)', async () => {
    const { local, connector } = await setup();
    await connector().ensureFields();
    const [a, b, c, d] = local.seedAccounts([
      { Name: "O'Brien 50%_Co\\ Ltd" },
      { Name: "O'Brien 50x Co Ltd" },
      { Name: 'obrien 50%_co' },
      { Name: 'ACME brien' },
    ]);
    expect((await connector().findByName!("'brien 50%_co\\", 100)).map((r) => r.id)).toEqual([a!.Id]);
    expect((await connector().findByName!('BRIEN', 100)).map((r) => r.id).sort()).toEqual(
      [a!.Id, b!.Id, c!.Id, d!.Id].sort(),
    );
    expect(await connector().findByName!('BRIEN', 2)).toHaveLength(2);
    expect(await connector().findByName!('  ', 100)).toEqual([]);
  });

  it('reports missing connector fields as CrmFieldsMissingError', async () => {
    const { local, connector } = await setup();
    local.seedAccounts(1);
    await expect(connector().listCompanies(null)).rejects.toBeInstanceOf(CrmFieldsMissingError);
  });
});

describe('writes', () => {
  it('writes values as received, datetimes as ISO, null clears; reads them back the same', async () => {
    const { local, connector } = await setup();
    await connector().ensureFields();
    const [a] = local.seedAccounts(1);
    const c = connector();
    const results = await c.writeCompanies([
      {
        id: a!.Id,
        values: {
          slug: 'acme',
          score: 81.123456,
          band: 'strong',
          scoredAt: '2024-05-01T14:30:00+02:00',
          pillars: 'Team 80 (30%)\nMarket 70 (70%)',
          verifiedScore: null,
          matchStatus: 'matched',
          reportUrl: 'https://reports.example/acme',
          syncedAt: '2024-05-02T00:00:00.000Z',
        },
      },
    ]);
    expect(results).toEqual([{ id: a!.Id, ok: true }]);
    const stored = local.getAccount(a!.Id)!;
    expect(stored.custom).toMatchObject({
      Report_Score__c: 81.123456,
      Report_Scored_At__c: Date.parse('2024-05-01T12:30:00Z'),
      Report_Verified_Score__c: null,
      Report_Match_Status__c: 'matched',
    });
    expect(stored.LastModifiedById).toBe(local.integrationUserId);
    const [read] = await c.readCompanies([a!.Id]);
    expect(read!.fields).toMatchObject({
      slug: 'acme',
      score: 81.123456,
      scoredAt: '2024-05-01T12:30:00.000Z',
      syncedAt: '2024-05-02T00:00:00.000Z',
      verifiedScore: null,
      pillars: 'Team 80 (30%)\nMarket 70 (70%)',
    });

    await c.writeCompanies([{ id: a!.Id, values: { score: null, band: null } }]);
    expect(local.getAccount(a!.Id)!.custom).toMatchObject({
      Report_Score__c: null,
      Report_Band__c: null,
      Report_Slug__c: 'acme',
    });
  });

  it('sends collections of at most 200 and returns one result per update in order', async () => {
    const { local, connector } = await setup();
    await connector().ensureFields();
    const accounts = local.seedAccounts(450);
    local.resetCounters();
    const results = await connector().writeCompanies(
      accounts.map((a, i) => ({ id: a.Id, values: { score: i } })),
    );
    expect(results.map((r) => r.id)).toEqual(accounts.map((a) => a.Id));
    expect(results.every((r) => r.ok)).toBe(true);
    expect(local.counters()['composite.sobjects']).toBe(3);
    expect(local.getAccount(accounts[449]!.Id)!.custom.Report_Score__c).toBe(449);
  });

  it('maps per-record errors: deleted, merged, bad id, bad value', async () => {
    const { local, connector } = await setup();
    await connector().ensureFields();
    const [ok, deleted, loser, winner] = local.seedAccounts(4);
    local.deleteAccount(deleted!.Id);
    local.deleteAccount(loser!.Id, { mergedInto: winner!.Id });
    const results = await connector().writeCompanies([
      { id: ok!.Id, values: { score: 1 } },
      { id: deleted!.Id, values: { score: 2 } },
      { id: loser!.Id, values: { score: 3 } },
      { id: 'not-an-id', values: { score: 4 } },
      { id: ok!.Id, values: { band: 'x'.repeat(256) } },
      { id: ok!.Id, values: { scoredAt: 'yesterday' } },
    ]);
    expect(results[0]).toEqual({ id: ok!.Id, ok: true });
    expect(results[1]).toMatchObject({
      ok: false,
      error: { code: 'NOT_FOUND', providerCode: 'ENTITY_IS_DELETED' },
    });
    expect(results[1]).not.toHaveProperty('error.mergedInto');
    expect(results[2]).toMatchObject({ ok: false, error: { code: 'NOT_FOUND', mergedInto: winner!.Id } });
    expect(results[3]).toMatchObject({ id: 'not-an-id', ok: false, error: { code: 'NOT_FOUND' } });
    expect(results[4]).toMatchObject({ ok: false, error: { code: 'INVALID_VALUE' } });
    expect(results[5]).toMatchObject({ ok: false, error: { code: 'INVALID_VALUE' } });
  });

  it('returns RETRYABLE for a locked row and INVALID_VALUE for a record a validation rule refuses', async () => {
    const { local, connector } = await setup();
    await connector().ensureFields();
    const accounts = local.seedAccounts(2);
    local.injectFaults({ lockRowShare: 1 });
    const locked = await connector().writeCompanies(
      accounts.map((a) => ({ id: a.Id, values: { score: 1 } })),
    );
    expect(locked.map((r) => (r.ok ? 'ok' : r.error.code))).toEqual(['RETRYABLE', 'RETRYABLE']);
    expect(locked[0]).toMatchObject({ error: { providerCode: 'UNABLE_TO_LOCK_ROW' } });
    local.clearFaults();
    local.injectFaults({ failShare: 1 });
    const refused = await connector().writeCompanies([{ id: accounts[0]!.Id, values: { score: 1 } }]);
    expect(refused[0]).toMatchObject({
      ok: false,
      error: { code: 'INVALID_VALUE', providerCode: 'FIELD_CUSTOM_VALIDATION_EXCEPTION' },
    });
  });

  it('explains field-level security in plain words when the permission set is not assigned', async () => {
    const { local, connector } = await setup();
    createFieldsWithoutPermissionSet(local);
    const [a] = local.seedAccounts(1);
    const [result] = await connector().writeCompanies([{ id: a!.Id, values: { score: 5, band: 'b' } }]);
    expect(result).toMatchObject({
      ok: false,
      error: { code: 'FIELD_NOT_WRITABLE', providerCode: 'INVALID_FIELD_FOR_INSERT_UPDATE' },
    });
    const message = result!.ok ? '' : result!.error.message;
    expect(message).toMatch(/integration user lacks edit access/);
    expect(message).toMatch(/Report_Score__c/);
    expect(message).toMatch(/Report_Connector/);
    expect(local.getAccount(a!.Id)!.custom.Report_Score__c).toBeUndefined();
  });

  it('writes through Bulk API 2.0: one job, results in order, #N/A clears', async () => {
    const { local, connector } = await setup();
    await connector().ensureFields();
    const accounts = local.seedAccounts(30);
    local.updateAccountAsPerson(accounts[0]!.Id, { Report_Band__c: 'old' });
    local.deleteAccount(accounts[5]!.Id);
    local.resetCounters();
    const updates = accounts.map((a, i) => ({
      id: a.Id,
      values: i === 0 ? { band: null, score: 0.5 } : { score: i, band: `band "${i}", quoted` },
    }));
    const results = await connector().writeCompaniesBulk(updates);
    expect(results.map((r) => r.id)).toEqual(accounts.map((a) => a.Id));
    expect(results.filter((r) => !r.ok)).toEqual([
      expect.objectContaining({
        id: accounts[5]!.Id,
        error: expect.objectContaining({ code: 'NOT_FOUND', providerCode: 'ENTITY_IS_DELETED' }),
      }),
    ]);
    expect(local.getAccount(accounts[0]!.Id)!.custom).toMatchObject({
      Report_Band__c: null,
      Report_Score__c: 0.5,
    });
    expect(local.getAccount(accounts[7]!.Id)!.custom).toMatchObject({
      Report_Band__c: 'band "7", quoted',
      Report_Score__c: 7,
    });
    expect(local.counters()).toMatchObject({
      'bulk.createJob': 1,
      'bulk.upload': 1,
      'bulk.setState': 1,
      'bulk.check': 2,
    });
    expect(local.counters()['composite.sobjects']).toBeUndefined();
  });
});

describe('whole-call errors', () => {
  it('retries REQUEST_LIMIT_EXCEEDED with backoff and succeeds', async () => {
    const { local, connector, gate } = await setup();
    await connector().ensureFields();
    const [a] = local.seedAccounts(1);
    local.resetCounters();
    local.injectFaults({ requestLimitExceeded: 2 });
    expect(await connector().writeCompanies([{ id: a!.Id, values: { score: 1 } }])).toEqual([
      { id: a!.Id, ok: true },
    ]);
    expect(local.counters()['composite.sobjects']).toBe(3);
    expect(gate.pauses).toEqual([]);
  });

  it('gives up on REQUEST_LIMIT_EXCEEDED with CrmRateLimitedError and pauses the gate', async () => {
    const { local, connector, gate } = await setup();
    await connector().ensureFields();
    const [a] = local.seedAccounts(1);
    local.resetCounters();
    local.injectFaults({ requestLimitExceeded: 10 });
    const err = await connector()
      .writeCompanies([{ id: a!.Id, values: { score: 1 } }])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrmRateLimitedError);
    expect((err as CrmRateLimitedError).retryAfterMs).toBeGreaterThan(0);
    expect(gate.pauses).toEqual([(err as CrmRateLimitedError).retryAfterMs]);
    expect(local.counters()['composite.sobjects']).toBe(3);
  });

  it('retries a whole-call UNABLE_TO_LOCK_ROW, then gives up with CrmTransientError', async () => {
    const { local, connector } = await setup();
    await connector().ensureFields();
    const [a] = local.seedAccounts(1);
    local.injectFaults({ lockRowWholeCall: 1 });
    expect(await connector().writeCompanies([{ id: a!.Id, values: { score: 1 } }])).toEqual([
      { id: a!.Id, ok: true },
    ]);
    local.resetCounters();
    local.injectFaults({ lockRowWholeCall: 5 });
    await expect(connector().writeCompanies([{ id: a!.Id, values: { score: 1 } }])).rejects.toBeInstanceOf(
      CrmTransientError,
    );
    expect(local.counters()['composite.sobjects']).toBe(3);
  });

  it('refreshes once on INVALID_SESSION_ID and retries', async () => {
    const { local, connector, refreshes } = await setup();
    const c = connector();
    await c.ensureFields();
    local.seedAccounts(3);
    local.expireAccessTokens();
    const page = await c.listCompanies(null);
    expect(page.records).toHaveLength(3);
    expect(refreshes).toHaveLength(1);
  });

  it('refreshes the SOAP session too (Metadata API faults with sf:INVALID_SESSION_ID)', async () => {
    const { local, connector, refreshes } = await setup();
    local.expireAccessTokens();
    const result = await connector().ensureFields();
    expect(result.created).toHaveLength(SALESFORCE_FIELDS.length);
    expect(refreshes).toHaveLength(1);
  });

  it('answers CrmUnauthorizedError when the refreshed token is refused too', async () => {
    const { local, connector, refreshes } = await setup();
    await connector().ensureFields();
    local.injectFaults({ sessionExpired: 2 });
    await expect(connector().listCompanies(null)).rejects.toBeInstanceOf(CrmUnauthorizedError);
    expect(refreshes).toHaveLength(1);
  });

  it('turns a 503 into CrmTransientError', async () => {
    const { local, connector } = await setup();
    await connector().ensureFields();
    const [a] = local.seedAccounts(1);
    local.injectFaults({ serverErrors: 1 });
    await expect(connector().writeCompanies([{ id: a!.Id, values: { score: 1 } }])).rejects.toBeInstanceOf(
      CrmTransientError,
    );
  });

  it('paces every call through the request gate', async () => {
    const { local, connector, gate } = await setup();
    await connector().ensureFields();
    local.seedAccounts(120);
    const before = gate.acquired;
    local.resetCounters();
    let cursor: string | null = null;
    do cursor = (await connector().listCompanies(cursor)).nextCursor;
    while (cursor);
    // Three pages and the org's one describe of Account (are country picklists on?).
    expect(gate.acquired - before).toBe(4);
  });
});

describe('daily API usage', () => {
  it('pauses background work past the share, keeps urgent work going, and resumes below it', async () => {
    const { local, connector } = await setup({ dailyApiLimit: 1000 });
    let now = 1_000_000;
    const usage = new SalesforceUsageTracker({ pauseShare: 0.8, recheckMs: 60_000, now: () => now });
    const background = connector({ usage });
    const urgent = background.withPriority('urgent');
    await urgent.ensureFields();
    const [a] = local.seedAccounts(1);

    local.setApiUsage(850);
    await urgent.readCompanies([a!.Id]);
    // Two calls: the org's first read also describes Account once (are country picklists on?).
    expect(urgent.apiUsage()).toMatchObject({ used: 852, limit: 1000 });
    expect(background.apiUsage()?.summary).toMatch(/852 of 1,000.*paused/);

    local.resetCounters();
    const paused = await background
      .writeCompanies([{ id: a!.Id, values: { score: 1 } }])
      .catch((e: unknown) => e);
    expect(paused).toBeInstanceOf(CrmQuotaPausedError);
    expect((paused as CrmQuotaPausedError).retryAfterMs).toBe(60_000);
    expect(local.counters()['composite.sobjects']).toBeUndefined(); // nothing was sent

    expect(await urgent.writeCompanies([{ id: a!.Id, values: { score: 2 } }])).toEqual([
      { id: a!.Id, ok: true },
    ]);

    local.setApiUsage(100);
    now += 30_000;
    await expect(background.readCompanies([a!.Id])).rejects.toBeInstanceOf(CrmQuotaPausedError);
    now += 30_000;
    // The recheck interval has passed: one background call goes out as a probe and lifts the pause.
    expect(await background.readCompanies([a!.Id])).toHaveLength(1);
    expect(background.apiUsage()).toMatchObject({ used: 101 });
    expect(await background.writeCompanies([{ id: a!.Id, values: { score: 3 } }])).toEqual([
      { id: a!.Id, ok: true },
    ]);
  });

  it('reads Sforce-Limit-Info from Metadata API (SOAP) responses, which jsforce does not track', async () => {
    const { local, url, tokens, gate } = await setup({ dailyApiLimit: 5000 });
    local.setApiUsage(40);
    const usage = new SalesforceUsageTracker({ pauseShare: 0.8 });
    const api = new SalesforceApi({ instanceUrl: url, apiVersion: '63.0', tokens, gate, usage });
    await api.run('urgent', 'read', (conn) => conn.metadata.read('CustomField', ['Account.Report_Score__c']));
    expect(local.counters()['soap.readMetadata']).toBe(1);
    expect(usage.snapshot()).toMatchObject({ used: 41, limit: 5000 });
    expect(api.conn.limitInfo).toEqual({}); // jsforce itself saw nothing
  });

  it('reads it from Bulk API 2.0 responses too', async () => {
    const { local, connector } = await setup({ dailyApiLimit: 7000 });
    const c = connector();
    await c.ensureFields();
    const accounts = local.seedAccounts(3);
    local.setApiUsage(500);
    await c.writeCompaniesBulk(accounts.map((a) => ({ id: a.Id, values: { score: 1 } })));
    // Every call of the job was a Bulk API call; the last reading is the last of them.
    expect(c.apiUsage()).toMatchObject({ used: local.apiUsage().used, limit: 7000 });
    expect(local.apiUsage().used).toBeGreaterThan(505);
  });
});

describe('change polling', () => {
  it('starts at a baseline, then returns changes oldest first with the stamps', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const { local, connector } = await setup({ now: () => now });
    const c = connector();
    await c.ensureFields();
    const accounts = local.seedAccounts(5);
    now += 3_000;
    const baseline = await c.listChangedSince(null);
    expect(baseline.records).toEqual([]);

    now += 5_000;
    local.updateAccountAsPerson(accounts[3]!.Id, { Name: 'Renamed' });
    now += 5_000;
    local.updateAccountAsPerson(accounts[1]!.Id, { Report_Slug__c: 'hand-set' });
    now += 2_000;
    const changed = await c.listChangedSince(baseline.cursor);
    expect(changed.records.map((r) => r.id)).toEqual([accounts[3]!.Id, accounts[1]!.Id]);
    expect(changed.records[0]).toMatchObject({
      name: 'Renamed',
      createdAt: '2026-01-01T00:00:00.000Z',
      modifiedAt: '2026-01-01T00:00:08.000Z',
    });
    expect(changed.records[1]!.fields.slug).toBe('hand-set');

    now += 60_000;
    const quiet = await c.listChangedSince(changed.cursor);
    expect(quiet.records).toEqual([]);
    // Nothing changed: the cursor moves up to the settled horizon so the next query scans less.
    expect(await c.listChangedSince(quiet.cursor)).toEqual({
      records: [],
      changes: [],
      cursor: quiet.cursor,
    });
  });

  it('neither repeats nor skips records that share one SystemModstamp across polls', async () => {
    let now = Date.parse('2026-02-01T00:00:00Z');
    const { local, connector } = await setup({ now: () => now, queryPageSize: 2 });
    const c = connector({ maxChangesPerPoll: 2 });
    await c.ensureFields();
    const start = await c.listChangedSince('2025-12-31T00:00:00Z');
    // All 7 get the same second; page size 2 and a cap of 2 per poll cut through the tie.
    const seeded = local.seedAccounts(7);
    now += 5_000;
    const seen: string[] = start.records.map((r) => r.id);
    let cursor = start.cursor;
    for (let i = 0; i < 10; i++) {
      const next = await c.listChangedSince(cursor);
      seen.push(...next.records.map((r) => r.id));
      cursor = next.cursor;
      if (next.records.length === 0) break;
    }
    expect(seen).toEqual(seeded.map((a) => a.Id));
  });

  it('holds back the current second until it is over, so later writes in it are not skipped', async () => {
    let now = Date.parse('2026-03-01T00:00:00.100Z');
    const { local, connector } = await setup({ now: () => now });
    const c = connector();
    await c.ensureFields();
    const start = await c.listChangedSince('2026-02-28T00:00:00Z');
    const [first, second] = local.seedAccounts(2);
    const early = await c.listChangedSince(start.cursor);
    expect(early.records).toEqual([]); // 00:00:00 is not over yet

    now += 400; // still 00:00:00: a person edits the first Account, a new one appears
    local.updateAccountAsPerson(first!.Id, { Name: 'Edited in the same second' });
    const [third] = local.seedAccounts(1);
    now += 2_000;
    const settled = await c.listChangedSince(early.cursor);
    expect(settled.records.map((r) => r.id)).toEqual([first!.Id, second!.Id, third!.Id]);
    expect(settled.records[0]!.name).toBe('Edited in the same second');
  });
});
