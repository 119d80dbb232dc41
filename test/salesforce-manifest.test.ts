import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ComponentSet, MetadataConverter } from '@salesforce/source-deploy-retrieve';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { SALESFORCE_FIELDS } from '../connectors/salesforce/fields/field-names.js';
import { salesforceShape } from '../connectors/salesforce/fields/field-types.js';
import {
  PLACEHOLDER_APP_URL,
  salesforceProjectFiles,
  writeSalesforceManifests,
} from '../connectors/salesforce/manifest/manifest.js';
import { filesUnder } from './support/files-under.js';

/**
 * manifests/salesforce is generated from SALESFORCE_FIELDS; this fails when the committed files drift from the generator
 * (regenerate with writeSalesforceManifests('manifests/salesforce', PLACEHOLDER_APP_URL)), and checks that
 * what is committed says what Salesforce needs.
 */

const COMMITTED = join(import.meta.dirname, '..', 'manifests', 'salesforce');
const parser = new XMLParser({
  ignoreAttributes: false,
  parseTagValue: false,
  isArray: (n) => ['fieldPermissions', 'scopes', 'types', 'members'].includes(n),
});

describe('committed Salesforce manifests', () => {
  const generated = salesforceProjectFiles({ appUrl: PLACEHOLDER_APP_URL });

  it('are exactly what the generator makes from FIELDS', async () => {
    expect(await filesUnder(COMMITTED)).toEqual(Object.keys(generated).sort());
    for (const [path, content] of Object.entries(generated)) {
      expect(await readFile(join(COMMITTED, path), 'utf8'), path).toBe(content);
    }
  });

  it('are well-formed XML, every one', async () => {
    const xmlFiles = (await filesUnder(COMMITTED)).filter((p) => p.endsWith('.xml'));
    // Fields, three permission sets, the External Client App, its two OAuth settings and its OAuth policies,
    // package.xml, the configurations of the record component and of its two modules (words, fields), the
    // record page and Account's Change Data Capture selection.
    expect(xmlFiles.length).toBe(SALESFORCE_FIELDS.length + 13);
    for (const path of xmlFiles) {
      expect(XMLValidator.validate(await readFile(join(COMMITTED, path), 'utf8')), path).toBe(true);
    }
  });

  it('declare every field with the type the Metadata API calls use', async () => {
    for (const field of SALESFORCE_FIELDS) {
      const xml = await readFile(
        join(COMMITTED, `unpackaged/main/default/objects/Account/fields/${field.salesforce}.field-meta.xml`),
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
        join(COMMITTED, 'unpackaged/main/default/objects/Account/fields/Report_Score__c.field-meta.xml'),
        'utf8',
      ),
    );
    expect(score.CustomField).toMatchObject({ type: 'Number', precision: '18', scale: '6' });
  });

  it('grant read and edit on every field in the permission set', async () => {
    const xml = await readFile(
      join(COMMITTED, 'unpackaged/main/default/permissionsets/Report_Connector.permissionset-meta.xml'),
      'utf8',
    );
    const ps = parser.parse(xml).PermissionSet;
    expect(ps.fieldPermissions.map((p: { field: string }) => p.field).sort()).toEqual(
      SALESFORCE_FIELDS.map((f) => `Account.${f.salesforce}`).sort(),
    );
    for (const p of ps.fieldPermissions) expect(p).toMatchObject({ readable: 'true', editable: 'true' });
  });

  it('grant people read on every field (Report_Viewer), and edit on the slug alone (Report_Editor)', async () => {
    const read = async (name: string) =>
      parser.parse(
        await readFile(
          join(COMMITTED, `unpackaged/main/default/permissionsets/${name}.permissionset-meta.xml`),
          'utf8',
        ),
      ).PermissionSet;
    const access = (ps: { fieldPermissions: { field: string; readable: string; editable: string }[] }) =>
      Object.fromEntries(ps.fieldPermissions.map((p) => [p.field, `${p.readable}/${p.editable}`]));
    const everyField = SALESFORCE_FIELDS.map((f) => `Account.${f.salesforce}`).sort();

    const viewer = await read('Report_Viewer');
    expect(Object.keys(access(viewer)).sort()).toEqual(everyField);
    expect(new Set(Object.values(access(viewer)))).toEqual(new Set(['true/false']));
    expect(viewer.objectPermissions).toMatchObject({
      object: 'Account',
      allowRead: 'true',
      allowEdit: 'false',
    });

    const editor = await read('Report_Editor');
    expect(Object.keys(access(editor)).sort()).toEqual(everyField);
    for (const [field, rw] of Object.entries(access(editor))) {
      expect(rw, field).toBe(field === 'Account.Report_Slug__c' ? 'true/true' : 'true/false');
    }
    // Read on Account, not edit: the set adds the slug field and never widens who may edit Accounts.
    expect(editor.objectPermissions).toMatchObject({
      object: 'Account',
      allowRead: 'true',
      allowEdit: 'false',
    });
  });

  it('expose the record component on Account record pages only, with the connector address set', async () => {
    const bundle = 'unpackaged/main/default/lwc/reportScore';
    const files = await filesUnder(COMMITTED);
    expect(files.filter((f) => f.startsWith(`${bundle}/`))).toEqual(
      [
        'reportScore.css',
        'reportScore.html',
        'reportScore.js',
        'reportScore.js-meta.xml',
        'reportScoreView.js',
      ].map((f) => `${bundle}/${f}`),
    );
    const meta = parser.parse(
      await readFile(join(COMMITTED, `${bundle}/reportScore.js-meta.xml`), 'utf8'),
    ).LightningComponentBundle;
    expect(meta).toMatchObject({
      apiVersion: '68.0',
      isExposed: 'true',
      targets: { target: 'lightning__RecordPage' },
    });
    const config = meta.targetConfigs.targetConfig;
    expect(config['@_targets']).toBe('lightning__RecordPage');
    expect(config.objects).toEqual({ object: 'Account' });
    const props = Object.fromEntries(
      config.property.map((p: Record<string, string>) => [p['@_name'], p['@_default'] ?? null]),
    );
    expect(props).toEqual({ connectorUrl: 'https://report-connector.example.com', installationId: null });
    // No Apex and no callout: the component reads the record through Lightning Data Service only.
    const js = await readFile(join(COMMITTED, `${bundle}/reportScore.js`), 'utf8');
    expect(js).toContain("from 'lightning/uiRecordApi'");
    expect(js).not.toMatch(/@salesforce\/apex|fetch\(|XMLHttpRequest/);
  });

  it.each([
    ['sellerWords', 'reportScoreView.js'],
    ['reportFields', 'reportScoreView.js'],
    ['reportFields', 'reportScore.js'],
  ])('hold %s as a service module %s imports, exposed nowhere', async (module, importer) => {
    const bundle = `unpackaged/main/default/lwc/${module}`;
    const files = await filesUnder(COMMITTED);
    expect(files.filter((f) => f.startsWith(`${bundle}/`))).toEqual(
      [`${module}.js`, `${module}.js-meta.xml`].map((f) => `${bundle}/${f}`),
    );
    const meta = parser.parse(
      await readFile(join(COMMITTED, `${bundle}/${module}.js-meta.xml`), 'utf8'),
    ).LightningComponentBundle;
    expect(meta).toMatchObject({ apiVersion: '68.0', isExposed: 'false' });
    expect(meta.targets).toBeUndefined();
    const component = await readFile(
      join(COMMITTED, `unpackaged/main/default/lwc/reportScore/${importer}`),
      'utf8',
    );
    expect(component).toContain(`from 'c/${module}';`);
    // Plain JavaScript: no type left, no import at all.
    const script = await readFile(join(COMMITTED, `${bundle}/${module}.js`), 'utf8');
    expect(script).not.toMatch(/^import |: string\b|as const/m);
  });

  it('hold an Account record page placing the component, and never make it the org default', async () => {
    const files = await filesUnder(COMMITTED);
    const page = parser.parse(
      await readFile(
        join(COMMITTED, 'unpackaged/main/default/flexipages/Account_Report_Record_Page.flexipage-meta.xml'),
        'utf8',
      ),
    ).FlexiPage;
    expect(page).toMatchObject({
      type: 'RecordPage',
      sobjectType: 'Account',
      template: { name: 'flexipage:recordHomeTemplateDesktop' },
    });
    const components = [page.flexiPageRegions]
      .flat()
      .flatMap((r: { itemInstances: unknown }) => [r.itemInstances].flat())
      .map((i) => (i as { componentInstance: { componentName: string } }).componentInstance.componentName);
    expect(components).toContain('c:reportScore');
    // A page becomes the default through an action override on the object (or activation in Setup): the
    // project holds no object file and no override.
    expect(files.filter((f) => f.endsWith('.object-meta.xml'))).toEqual([]);
    for (const f of files)
      expect(await readFile(join(COMMITTED, f), 'utf8'), f).not.toContain('actionOverrides');
  });

  it('hold an External Client App for the PKCE web server flow, and no connected app', async () => {
    const files = await filesUnder(COMMITTED);
    expect(files.filter((f) => /connectedApp/i.test(f))).toEqual([]);
    const read = async (path: string) => parser.parse(await readFile(join(COMMITTED, path), 'utf8'));
    const app = (await read('app/main/default/externalClientApps/Report_Connector.eca-meta.xml'))
      .ExternalClientApplication;
    // Packaged: one app, in a managed package, for every org that installs it.
    expect(app).toMatchObject({ label: 'Report Connector', distributionState: 'Packaged' });
    const global = (
      await read(
        'app-owner/main/default/extlClntAppGlobalOauthSets/Report_Connector_Global_OAuth.ecaGlblOauth-meta.xml',
      )
    ).ExtlClntAppGlobalOauthSettings;
    expect(global).toMatchObject({
      callbackUrl: 'https://report-connector.example.com/oauth/salesforce/callback',
      externalClientApplication: 'Report_Connector',
      isPkceRequired: 'true',
      // Rotation is a global OAuth setting in the Metadata API, never a policy.
      isRefreshTokenRotationEnabled: 'true',
    });
    // Salesforce generates the consumer key and secret; they never go into source control.
    expect(global.consumerKey).toBeUndefined();
    expect(global.consumerSecret).toBeUndefined();
    const oauth = (
      await read('app/main/default/extlClntAppOauthSettings/Report_Connector_OAuth.ecaOauth-meta.xml')
    ).ExtlClntAppOauthSettings;
    expect(oauth.externalClientApplication).toBe('Report_Connector');
    expect(String(oauth.commaSeparatedOauthScopes).split(/,\s*/)).toEqual(['Api', 'RefreshToken']);
  });

  it('list every component in package.xml', async () => {
    const pkg = parser.parse(await readFile(join(COMMITTED, 'manifest/package.xml'), 'utf8')).Package;
    const byType = Object.fromEntries(
      pkg.types.map((t: { name: string; members: string[] }) => [t.name, t.members]),
    );
    expect(byType.CustomField.sort()).toEqual(SALESFORCE_FIELDS.map((f) => `Account.${f.salesforce}`).sort());
    expect(byType.PermissionSet).toEqual(['Report_Connector', 'Report_Editor', 'Report_Viewer']);
    expect(byType.PlatformEventChannelMember).toEqual(['ChangeEvents_AccountChangeEvent']);
    expect(byType.LightningComponentBundle).toEqual(['reportFields', 'reportScore', 'sellerWords']);
    expect(byType.FlexiPage).toEqual(['Account_Report_Record_Page']);
    expect(byType.ConnectedApp).toBeUndefined();
    expect(byType.ExternalClientApplication).toEqual(['Report_Connector']);
    expect(byType.ExtlClntAppOauthSettings).toEqual(['Report_Connector_OAuth']);
    expect(byType.ExtlClntAppGlobalOauthSettings).toEqual(['Report_Connector_Global_OAuth']);
    expect(byType.ExtlClntAppOauthConfigurablePolicies).toEqual(['Report_Connector_OAuth_Policies']);
    const project = JSON.parse(await readFile(join(COMMITTED, 'sfdx-project.json'), 'utf8'));
    expect(project.sourceApiVersion).toBe(pkg.version);
    expect(pkg.version).toBe('68.0');
  });

  it('ship OAuth policies with an idle limit and an IP policy', async () => {
    const xml = await readFile(
      join(
        COMMITTED,
        'app-owner/main/default/extlClntAppOauthPolicies/Report_Connector_OAuth_Policies.ecaOauthPlcy-meta.xml',
      ),
      'utf8',
    );
    expect(parser.parse(xml).ExtlClntAppOauthConfigurablePolicies).toEqual({
      '@_xmlns': 'http://soap.sforce.com/2006/04/metadata',
      externalClientApplication: 'Report_Connector',
      label: 'Report_Connector_OAuth_Policies',
      // Expire a refresh token after 30 days without use.
      refreshTokenPolicyType: 'SpecificInactivity',
      refreshTokenValidityPeriod: '30',
      refreshTokenValidityUnit: 'Days',
      // The org's IP restrictions hold for the app's sessions.
      ipRelaxationPolicyType: 'Enforce',
      permittedUsersPolicyType: 'AllSelfAuthorized',
    });
  });

  it('lay the project out as a managed package holding the app only, the fields outside it', async () => {
    const project = JSON.parse(await readFile(join(COMMITTED, 'sfdx-project.json'), 'utf8'));
    expect(project.packageDirectories).toEqual([
      expect.objectContaining({ path: 'app', package: 'Report Connector', default: true }),
      { path: 'app-owner', default: false },
      { path: 'unpackaged', default: false },
    ]);
    const files = await filesUnder(COMMITTED);
    // Nothing of the fields or the permission set is in the package directory, so no namespace reaches them.
    expect(files.filter((f) => f.startsWith('app/') && /objects|permissionsets/.test(f))).toEqual([]);
    // Nor the global OAuth settings (never packaged) or the policies (each installing org's admin's).
    expect(files.filter((f) => f.startsWith('app/') && /GlobalOauth|OauthPolicies/.test(f))).toEqual([]);
    for (const field of SALESFORCE_FIELDS) {
      expect(files).toContain(
        `unpackaged/main/default/objects/Account/fields/${field.salesforce}.field-meta.xml`,
      );
    }
  });
});

describe('writeSalesforceManifests', () => {
  it('writes the project for another app URL, escaping it as XML', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sf-manifest-'));
    try {
      const written = await writeSalesforceManifests(dir, 'https://crm.example.org/a&b/');
      expect(written).toEqual(await filesUnder(dir));
      const xml = await readFile(
        join(
          dir,
          'app-owner/main/default/extlClntAppGlobalOauthSets/Report_Connector_Global_OAuth.ecaGlblOauth-meta.xml',
        ),
        'utf8',
      );
      expect(XMLValidator.validate(xml)).toBe(true);
      expect(parser.parse(xml).ExtlClntAppGlobalOauthSettings.callbackUrl).toBe(
        'https://crm.example.org/a&b/oauth/salesforce/callback',
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/**
 * @salesforce/source-deploy-retrieve is the library the Salesforce CLI deploys with: it must recognise every
 * file of the project (an unknown one throws TypeInferenceError) and convert it to Metadata API format, the
 * shape `sf project deploy start` sends.
 */
describe('the SFDX project as @salesforce/source-deploy-retrieve reads it', () => {
  const memberSets = (types: { name: string; members: string[] }[]) =>
    Object.fromEntries(types.map((t) => [t.name, [...t.members].sort()]));

  it('recognises every component and converts the project to Metadata API format', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sf-sdr-'));
    try {
      await writeSalesforceManifests(join(dir, 'project'), PLACEHOLDER_APP_URL);
      const project = join(dir, 'project');
      const components = ComponentSet.fromSource({
        fsPaths: ['app', 'app-owner', 'unpackaged'].map((d) => join(project, d)),
      });
      const sdrPackage = parser.parse(await components.getPackageXml()).Package;
      const ours = parser.parse(await readFile(join(dir, 'project', 'manifest/package.xml'), 'utf8')).Package;
      expect(memberSets(sdrPackage.types)).toEqual(memberSets(ours.types));

      const converted = await new MetadataConverter().convert(components, 'metadata', {
        type: 'directory',
        outputDirectory: join(dir, 'mdapi'),
        genUniqueDir: false,
      });
      const out = await filesUnder(converted.packagePath!);
      expect(out).toEqual(
        expect.arrayContaining([
          'package.xml',
          'externalClientApps/Report_Connector.eca',
          'extlClntAppOauthSettings/Report_Connector_OAuth.ecaOauth',
          'extlClntAppOauthPolicies/Report_Connector_OAuth_Policies.ecaOauthPlcy',
          'extlClntAppGlobalOauthSets/Report_Connector_Global_OAuth.ecaGlblOauth',
          'objects/Account.object',
          'permissionsets/Report_Connector.permissionset',
          'permissionsets/Report_Viewer.permissionset',
          'permissionsets/Report_Editor.permissionset',
          'platformEventChannelMembers/ChangeEvents_AccountChangeEvent.platformEventChannelMember',
          'flexipages/Account_Report_Record_Page.flexipage',
          'lwc/reportScore/reportScore.js',
          'lwc/reportScore/reportScore.js-meta.xml',
          'lwc/reportScore/reportScore.html',
          'lwc/reportScore/reportScore.css',
          'lwc/reportScore/reportScoreView.js',
          'lwc/sellerWords/sellerWords.js',
          'lwc/sellerWords/sellerWords.js-meta.xml',
          'lwc/reportFields/reportFields.js',
          'lwc/reportFields/reportFields.js-meta.xml',
        ]),
      );
      const account = parser.parse(
        await readFile(join(converted.packagePath!, 'objects/Account.object'), 'utf8'),
      );
      expect(
        [account.CustomObject.fields]
          .flat()
          .map((f: { fullName: string }) => f.fullName)
          .sort(),
      ).toEqual(SALESFORCE_FIELDS.map((f) => f.salesforce).sort());
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('converts the package directory alone: the External Client App and its OAuth settings', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sf-sdr-'));
    try {
      await writeSalesforceManifests(join(dir, 'project'), PLACEHOLDER_APP_URL);
      const components = ComponentSet.fromSource(join(dir, 'project', 'app'));
      const pkg = parser.parse(await components.getPackageXml()).Package;
      expect(memberSets(pkg.types)).toEqual({
        ExternalClientApplication: ['Report_Connector'],
        ExtlClntAppOauthSettings: ['Report_Connector_OAuth'],
      });
      const converted = await new MetadataConverter().convert(components, 'metadata', {
        type: 'directory',
        outputDirectory: join(dir, 'mdapi'),
        genUniqueDir: false,
      });
      expect(await filesUnder(converted.packagePath!)).toEqual([
        'externalClientApps/Report_Connector.eca',
        'extlClntAppOauthSettings/Report_Connector_OAuth.ecaOauth',
        'package.xml',
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses a file it does not recognise, so the check above can fail', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sf-sdr-'));
    try {
      await writeSalesforceManifests(dir, PLACEHOLDER_APP_URL);
      await mkdir(join(dir, 'app/main/default/widgets'), { recursive: true });
      await writeFile(join(dir, 'app/main/default/widgets/W.widget-meta.xml'), '<Widget/>\n', 'utf8');
      expect(() => ComponentSet.fromSource(join(dir, 'app'))).toThrow(/infer a metadata type/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
