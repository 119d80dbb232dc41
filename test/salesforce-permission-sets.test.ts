import { afterEach, describe, expect, it } from 'vitest';
import { SalesforceApi } from '../connectors/salesforce/api/api-client.js';
import { SalesforceUsageTracker } from '../connectors/salesforce/api/usage.js';
import { ensureSalesforceFields } from '../connectors/salesforce/fields/ensure-fields.js';
import { SALESFORCE_FIELDS } from '../connectors/salesforce/fields/field-names.js';
import {
  customFieldDefinition,
  permissionSetDefinition,
} from '../connectors/salesforce/fields/field-types.js';
import { editorPermissionSetDefinition } from '../connectors/salesforce/fields/permission-sets.js';
import { createLocalSalesforce, type LocalSalesforce } from '../connectors/salesforce/local/index.js';
import type { AccessTokenSource } from '../src/auth/token-manager.js';
import type { RequestGate } from '../src/crm/request-gate.js';

/**
 * The install-time field setup gives an org installed by OAuth (which never deploys the SFDX project) the
 * permission sets for people, Report_Viewer and Report_Editor, through the Metadata API as it creates the
 * fields; checked against the local Salesforce, which keeps each set's field permissions and reads them back
 * over the same Metadata API.
 */

const running: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

const openGate: RequestGate = { acquire: async () => {}, pause: async () => {} };

async function setup(): Promise<{ local: LocalSalesforce; api: SalesforceApi }> {
  const local = createLocalSalesforce();
  const server = await local.listen();
  running.push(server);
  const token = local.issueAccessToken();
  const tokens: AccessTokenSource = { current: async () => token, refreshAfterRejection: async () => token };
  const api = new SalesforceApi({
    instanceUrl: server.url,
    apiVersion: '63.0',
    tokens,
    gate: openGate,
    usage: new SalesforceUsageTracker({ pauseShare: 0.8 }),
  });
  return { local, api };
}

const everyField = SALESFORCE_FIELDS.map((f) => `Account.${f.salesforce}`).sort();

/** field → "read/edit" as the org keeps it. */
function accessOf(local: LocalSalesforce, name: string): Record<string, string> {
  const ps = local.org.readPermissionSet(name);
  if (!ps) throw new Error(`no permission set ${name}`);
  return Object.fromEntries(ps.fieldPermissions.map((p) => [p.field, `${p.readable}/${p.editable}`]));
}

/** Account read/edit as the org keeps it for a permission set. */
function accountAccessOf(local: LocalSalesforce, name: string): { allowRead: boolean; allowEdit: boolean } {
  const account = local.org.readPermissionSet(name)?.objectPermissions.find((o) => o.object === 'Account');
  if (!account) throw new Error(`${name} names no Account access`);
  return { allowRead: account.allowRead, allowEdit: account.allowEdit };
}

describe('field setup: the permission sets for people', () => {
  it('upserts Report_Viewer (read every field) and Report_Editor (edit the slug only), assigning neither', async () => {
    const { local, api } = await setup();
    const result = await ensureSalesforceFields(api);
    expect(result.problems).toEqual([]);

    const viewer = accessOf(local, 'Report_Viewer');
    expect(Object.keys(viewer).sort()).toEqual(everyField);
    expect(new Set(Object.values(viewer))).toEqual(new Set(['true/false']));

    const editor = accessOf(local, 'Report_Editor');
    expect(Object.keys(editor).sort()).toEqual(everyField);
    for (const [field, access] of Object.entries(editor)) {
      expect(access, field).toBe(field === 'Account.Report_Slug__c' ? 'true/true' : 'true/false');
    }
    expect(new Set(Object.values(accessOf(local, 'Report_Connector')))).toEqual(new Set(['true/true']));
    // Report_Editor adds the slug field only: read on Account, never Account edit (people have that from
    // their profile); the integration user's set keeps Account edit, which its writes need.
    expect(accountAccessOf(local, 'Report_Editor')).toEqual({ allowRead: true, allowEdit: false });
    expect(accountAccessOf(local, 'Report_Viewer')).toEqual({ allowRead: true, allowEdit: false });
    expect(accountAccessOf(local, 'Report_Connector')).toEqual({ allowRead: true, allowEdit: true });

    // The integration user gets its own set; people's sets are for an admin to assign.
    expect(local.isPermissionSetAssigned('Report_Connector')).toBe(true);
    expect(local.isPermissionSetAssigned('Report_Viewer')).toBe(false);
    expect(local.isPermissionSetAssigned('Report_Editor')).toBe(false);
    // The three sets went in one Metadata API call, after the two field batches.
    expect(local.counters()['soap.upsertMetadata']).toBe(3);
  });

  it('reads the sets back through the Metadata API with their field permissions', async () => {
    const { api } = await setup();
    await ensureSalesforceFields(api);
    const read = await api.run('urgent', 'read permission sets', (conn) =>
      conn.metadata.read('PermissionSet', ['Report_Viewer', 'Report_Editor']),
    );
    const sets = (Array.isArray(read) ? read : [read]) as unknown as {
      fullName: string;
      label: string;
      fieldPermissions: { field: string; readable: boolean; editable: boolean }[];
    }[];
    expect(sets.map((s) => [s.fullName, s.label])).toEqual([
      ['Report_Viewer', 'Report Viewer'],
      ['Report_Editor', 'Report Editor'],
    ]);
    const slug = (name: string) =>
      sets
        .find((s) => s.fullName === name)!
        .fieldPermissions.find((p) => p.field === 'Account.Report_Slug__c');
    expect(slug('Report_Viewer')).toEqual({
      field: 'Account.Report_Slug__c',
      readable: true,
      editable: false,
    });
    expect(slug('Report_Editor')).toEqual({
      field: 'Account.Report_Slug__c',
      readable: true,
      editable: true,
    });
  });

  it('adds the two sets to an org set up before they existed, leaving its fields alone', async () => {
    const { local, api } = await setup();
    // An org whose field setup predates the people's sets: the fields and Report_Connector only.
    for (const field of SALESFORCE_FIELDS) {
      expect(local.org.upsertCustomField(customFieldDefinition(field, 'metadataApi'))).toEqual({
        created: true,
      });
    }
    expect(local.org.upsertPermissionSet(permissionSetDefinition())).toEqual({ created: true });
    expect(local.org.readPermissionSet('Report_Viewer')).toBeUndefined();

    const result = await ensureSalesforceFields(api);
    expect(result.created).toEqual([]);
    expect(result.existing.sort()).toEqual(SALESFORCE_FIELDS.map((f) => f.salesforce).sort());
    expect(result.problems).toEqual([]);
    expect(Object.keys(accessOf(local, 'Report_Viewer')).sort()).toEqual(everyField);
    expect(accessOf(local, 'Report_Editor')['Account.Report_Slug__c']).toBe('true/true');
    expect(local.isPermissionSetAssigned('Report_Connector')).toBe(true);
  });

  it('takes Account edit away from a Report_Editor an earlier version saved with it, keeping the slug edit', async () => {
    const { local, api } = await setup();
    for (const field of SALESFORCE_FIELDS)
      local.org.upsertCustomField(customFieldDefinition(field, 'metadataApi'));
    const current = editorPermissionSetDefinition();
    // Report_Editor as it was first shipped: the same fields, and edit on Account itself.
    local.org.upsertPermissionSet({
      ...current,
      objectPermissions: current.objectPermissions.map((o) => ({ ...o, allowEdit: true })),
    });
    expect(accountAccessOf(local, 'Report_Editor')).toEqual({ allowRead: true, allowEdit: true });

    const result = await ensureSalesforceFields(api);
    expect(result.problems).toEqual([]);
    expect(accountAccessOf(local, 'Report_Editor')).toEqual({ allowRead: true, allowEdit: false });
    expect(accessOf(local, 'Report_Editor')['Account.Report_Slug__c']).toBe('true/true');

    // Read back over the Metadata API, as an admin's tools would see it.
    const read = await api.run('urgent', 'read Report_Editor', (conn) =>
      conn.metadata.read('PermissionSet', ['Report_Editor']),
    );
    const editor = (Array.isArray(read) ? read[0] : read) as unknown as {
      objectPermissions:
        | { object: string; allowEdit: unknown; allowRead: unknown }[]
        | { object: string; allowEdit: unknown; allowRead: unknown };
    };
    expect([editor.objectPermissions].flat()).toEqual([
      expect.objectContaining({ object: 'Account', allowRead: true, allowEdit: false }),
    ]);
  });

  it('the local Salesforce refuses edit without read, as Salesforce does', async () => {
    const { local } = await setup();
    for (const field of SALESFORCE_FIELDS)
      local.org.upsertCustomField(customFieldDefinition(field, 'metadataApi'));
    const ps = permissionSetDefinition();
    const refused = local.org.upsertPermissionSet({
      fullName: 'Broken',
      label: 'Broken',
      fieldPermissions: [{ field: ps.fieldPermissions[0]!.field, readable: false, editable: true }],
    });
    expect(refused).toMatchObject({ failure: { statusCode: 'FIELD_INTEGRITY_EXCEPTION' } });
    expect(local.org.readPermissionSet('Broken')).toBeUndefined();
  });
});
