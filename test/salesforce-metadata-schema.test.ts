import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PLACEHOLDER_APP_URL, salesforceProjectFiles } from '../connectors/salesforce/manifest/manifest.js';
import { checkMetadataXml, loadMetadataSchema } from './support/metadata-schema.js';

/**
 * Every Metadata API file of manifests/salesforce checked against the Metadata API's own types
 * (`@salesforce/types`' metadata.d.ts, generated from Salesforce's Metadata WSDL): each element a member of its
 * type, in the type's order, enumerations among their values. A deploy refuses an element its type lacks; the
 * converter the other manifest test runs does not look.
 */

const COMMITTED = join(import.meta.dirname, '..', 'manifests', 'salesforce');
const schema = loadMetadataSchema();
/**
 * An LWC bundle's js-meta.xml follows the LWC configuration file's own reference, whose examples put `targets`
 * before `targetConfigs` (the WSDL lists them the other way and keeps `targetConfigs` an opaque string): its
 * element names are checked, not their order.
 */
const options = { unordered: new Set(['LightningComponentBundle']) };

async function xmlFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.xml'))
    .map((e) => relative(dir, join(e.parentPath, e.name)).split('\\').join('/'))
    .sort();
}

describe('the Metadata API types from @salesforce/types', () => {
  it('hold the External Client App types, refresh token rotation among the global OAuth settings only', () => {
    const names = (type: string) => schema.complex.get(type)?.order ?? [];
    expect(names('ExtlClntAppGlobalOauthSettings')).toContain('isRefreshTokenRotationEnabled');
    expect(names('ExtlClntAppOauthConfigurablePolicies')).toContain('refreshTokenPolicyType');
    expect(names('ExtlClntAppOauthConfigurablePolicies')).not.toContain('isRefreshTokenRotationEnabled');
    expect(names('ExtlClntAppOauthSettings')).toContain('oauthLink');
    // Metadata's fullName first, as the WSDL's extension of the base type puts it.
    expect(names('CustomField')[0]).toBe('fullName');
    expect(schema.enums.get('ExtlClntAppDistState')).toEqual(
      new Set(['Local', 'Packaged', 'Managed', 'AutoInstalled']),
    );
  });
});

describe('every generated Salesforce metadata file', () => {
  it('uses only elements of its type, in the type order, with valid values (the committed copy)', async () => {
    const files = await xmlFiles(COMMITTED);
    expect(files.length).toBeGreaterThanOrEqual(20);
    const problems = [];
    for (const file of files) {
      problems.push(
        ...checkMetadataXml(schema, await readFile(join(COMMITTED, file), 'utf8'), file, options),
      );
    }
    expect(problems).toEqual([]);
  });

  it('does the same for what the generator makes for another app URL', () => {
    const generated = salesforceProjectFiles({ appUrl: 'https://crm.example.org/a&b' });
    const xml = Object.entries(generated).filter(([path]) => path.endsWith('.xml'));
    expect(xml.length).toBeGreaterThanOrEqual(20);
    expect(xml.flatMap(([path, content]) => checkMetadataXml(schema, content, path, options))).toEqual([]);
  });
});

describe('the schema check can fail', () => {
  const policies = salesforceProjectFiles({ appUrl: PLACEHOLDER_APP_URL })[
    'app-owner/main/default/extlClntAppOauthPolicies/Report_Connector_OAuth_Policies.ecaOauthPlcy-meta.xml'
  ]!;

  it('refuses refresh token rotation in the OAuth policies, where the Metadata API has no such element', () => {
    const withRotation = policies.replace(
      '    <label>',
      '    <isRefreshTokenRotationEnabled>true</isRefreshTokenRotationEnabled>\n    <label>',
    );
    expect(checkMetadataXml(schema, withRotation, 'policies')).toEqual([
      {
        path: 'policies:ExtlClntAppOauthConfigurablePolicies/isRefreshTokenRotationEnabled',
        problem: 'isRefreshTokenRotationEnabled is not an element of ExtlClntAppOauthConfigurablePolicies',
      },
    ]);
  });

  it('refuses an element out of order, a value outside its enumeration and a malformed boolean', () => {
    const xml = [
      '<?xml version="1.0" encoding="UTF-8"?>',
      '<ExternalClientApplication xmlns="http://soap.sforce.com/2006/04/metadata">',
      '    <label>Report Connector</label>',
      '    <contactEmail>a@example.com</contactEmail>',
      '    <distributionState>Everywhere</distributionState>',
      '    <isProtected>maybe</isProtected>',
      '</ExternalClientApplication>',
    ].join('\n');
    expect(checkMetadataXml(schema, xml, 'eca').map((p) => p.problem)).toEqual([
      'contactEmail comes after label; ExternalClientApplication orders it before',
      'distributionState comes after label; ExternalClientApplication orders it before',
      'Everywhere is not a value of ExtlClntAppDistState',
      'isProtected comes after label; ExternalClientApplication orders it before',
      'maybe is not a boolean',
    ]);
  });

  it('refuses a file missing an element its type requires', () => {
    const xml = [
      '<ExtlClntAppOauthSettings xmlns="http://soap.sforce.com/2006/04/metadata">',
      '    <commaSeparatedOauthScopes>Api</commaSeparatedOauthScopes>',
      '    <label>X</label>',
      '</ExtlClntAppOauthSettings>',
    ].join('\n');
    expect(checkMetadataXml(schema, xml, 'settings')).toEqual([
      {
        path: 'settings:ExtlClntAppOauthSettings',
        problem: 'ExtlClntAppOauthSettings requires externalClientApplication',
      },
    ]);
  });

  it('checks nested types too (a permission set field permission)', () => {
    const xml = [
      '<PermissionSet xmlns="http://soap.sforce.com/2006/04/metadata">',
      '    <fieldPermissions><editable>true</editable><field>Account.X__c</field><writable>true</writable></fieldPermissions>',
      '    <label>X</label>',
      '</PermissionSet>',
    ].join('\n');
    expect(checkMetadataXml(schema, xml, 'ps')).toEqual([
      {
        path: 'ps:PermissionSet/fieldPermissions/writable',
        problem: 'writable is not an element of PermissionSetFieldPermissions',
      },
    ]);
  });
});
