import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { salesforceShape } from '../connectors/salesforce/field-types.js';
import {
  PLACEHOLDER_APP_URL,
  salesforceProjectFiles,
  writeSalesforceManifests,
} from '../connectors/salesforce/manifest.js';
import { FIELDS } from '../src/fields.js';

/**
 * manifests/salesforce is generated from FIELDS; this fails when the committed files drift from the generator
 * (regenerate with writeSalesforceManifests('manifests/salesforce', PLACEHOLDER_APP_URL)), and checks that
 * what is committed says what Salesforce needs.
 */

const COMMITTED = join(import.meta.dirname, '..', 'manifests', 'salesforce');
const parser = new XMLParser({
  ignoreAttributes: false,
  parseTagValue: false,
  isArray: (n) => ['fieldPermissions', 'scopes', 'types', 'members'].includes(n),
});

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)).split('\\').join('/'))
    .sort();
}

describe('committed Salesforce manifests', () => {
  const generated = salesforceProjectFiles({ appUrl: PLACEHOLDER_APP_URL });

  it('are exactly what the generator makes from FIELDS', async () => {
    expect(await listFiles(COMMITTED)).toEqual(Object.keys(generated).sort());
    for (const [path, content] of Object.entries(generated)) {
      expect(await readFile(join(COMMITTED, path), 'utf8'), path).toBe(content);
    }
  });

  it('are well-formed XML, every one', async () => {
    const xmlFiles = (await listFiles(COMMITTED)).filter((p) => p.endsWith('.xml'));
    expect(xmlFiles.length).toBe(FIELDS.length + 3);
    for (const path of xmlFiles) {
      expect(XMLValidator.validate(await readFile(join(COMMITTED, path), 'utf8')), path).toBe(true);
    }
  });

  it('declare every field with the type the Metadata API calls use', async () => {
    for (const field of FIELDS) {
      const xml = await readFile(
        join(COMMITTED, `force-app/main/default/objects/Account/fields/${field.salesforce}.field-meta.xml`),
        'utf8',
      );
      const doc = parser.parse(xml).CustomField;
      const shape = salesforceShape(field);
      expect(doc.fullName).toBe(field.salesforce);
      expect(doc.label).toBe(field.label);
      expect(doc.type).toBe(shape.type);
      if (shape.length !== undefined) expect(Number(doc.length)).toBe(shape.length);
      if (shape.precision !== undefined)
        expect([Number(doc.precision), Number(doc.scale)]).toEqual([shape.precision, shape.scale]);
    }
    const score = parser.parse(
      await readFile(
        join(COMMITTED, 'force-app/main/default/objects/Account/fields/Report_Score__c.field-meta.xml'),
        'utf8',
      ),
    );
    expect(score.CustomField).toMatchObject({ type: 'Number', precision: '18', scale: '6' });
  });

  it('grant read and edit on every field in the permission set', async () => {
    const xml = await readFile(
      join(COMMITTED, 'force-app/main/default/permissionsets/Report_Connector.permissionset-meta.xml'),
      'utf8',
    );
    const ps = parser.parse(xml).PermissionSet;
    expect(ps.fieldPermissions.map((p: { field: string }) => p.field).sort()).toEqual(
      FIELDS.map((f) => `Account.${f.salesforce}`).sort(),
    );
    for (const p of ps.fieldPermissions) expect(p).toMatchObject({ readable: 'true', editable: 'true' });
  });

  it('configure the connected app for the PKCE web server flow', async () => {
    const xml = await readFile(
      join(COMMITTED, 'force-app/main/default/connectedApps/Report_Connector.connectedApp-meta.xml'),
      'utf8',
    );
    const oauth = parser.parse(xml).ConnectedApp.oauthConfig;
    expect(oauth.callbackUrl).toBe('https://report-connector.example.com/oauth/salesforce/callback');
    expect(oauth.isPkceRequired).toBe('true');
    expect(oauth.scopes).toEqual(['Api', 'RefreshToken']);
  });

  it('list every component in package.xml', async () => {
    const pkg = parser.parse(await readFile(join(COMMITTED, 'manifest/package.xml'), 'utf8')).Package;
    const byType = Object.fromEntries(
      pkg.types.map((t: { name: string; members: string[] }) => [t.name, t.members]),
    );
    expect(byType.CustomField.sort()).toEqual(FIELDS.map((f) => `Account.${f.salesforce}`).sort());
    expect(byType.PermissionSet).toEqual(['Report_Connector']);
    expect(byType.ConnectedApp).toEqual(['Report_Connector']);
    const project = JSON.parse(await readFile(join(COMMITTED, 'sfdx-project.json'), 'utf8'));
    expect(project.sourceApiVersion).toBe(pkg.version);
  });
});

describe('writeSalesforceManifests', () => {
  it('writes the project for another app URL, escaping it as XML', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sf-manifest-'));
    try {
      const written = await writeSalesforceManifests(dir, 'https://crm.example.org/a&b/');
      expect(written).toEqual(await listFiles(dir));
      const xml = await readFile(
        join(dir, 'force-app/main/default/connectedApps/Report_Connector.connectedApp-meta.xml'),
        'utf8',
      );
      expect(XMLValidator.validate(xml)).toBe(true);
      expect(parser.parse(xml).ConnectedApp.oauthConfig.callbackUrl).toBe(
        'https://crm.example.org/a&b/oauth/salesforce/callback',
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
