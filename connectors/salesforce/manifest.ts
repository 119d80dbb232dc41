import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { FIELDS } from '../../src/fields.js';
import { customFieldDefinition, permissionSetDefinition } from './field-types.js';
import { ACCOUNT_SOBJECT, DEFAULT_API_VERSION, EXTERNAL_CLIENT_APP, PERMISSION_SET } from './provider.js';

/**
 * The SFDX project in manifests/salesforce: the connector's Account fields, the permission set and the
 * External Client App (OAuth web server flow with PKCE) that the connector signs in through, for admins who
 * deploy metadata themselves (`sf project deploy start`) instead of letting the app create the fields at
 * install. test/salesforce-manifest.test.ts also converts the project with @salesforce/source-deploy-retrieve,
 * the library behind the Salesforce CLI, so every file is one it recognises. Generated from FIELDS and the same field-type table the Metadata API calls
 * use; test/salesforce-manifest.test.ts fails when the committed files drift from this output.
 */

export const PLACEHOLDER_APP_URL = 'https://report-connector.example.com';

const METADATA_NS = 'http://soap.sforce.com/2006/04/metadata';

type XmlValue = string | number | boolean | XmlNode | XmlValue[];
interface XmlNode {
  [element: string]: XmlValue | undefined;
}

function escapeXml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!,
  );
}

function renderChildren(node: XmlNode, depth: number): string[] {
  const lines: string[] = [];
  for (const [name, value] of Object.entries(node)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value])
      lines.push(...renderElement(name, item, depth));
  }
  return lines;
}

function renderElement(name: string, value: XmlValue, depth: number): string[] {
  const pad = '    '.repeat(depth);
  if (Array.isArray(value)) return value.flatMap((v) => renderElement(name, v, depth));
  if (typeof value === 'object') {
    return [`${pad}<${name}>`, ...renderChildren(value, depth + 1), `${pad}</${name}>`];
  }
  return [`${pad}<${name}>${escapeXml(String(value))}</${name}>`];
}

function metadataDocument(root: string, node: XmlNode): string {
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<${root} xmlns="${METADATA_NS}">`,
    ...renderChildren(node, 1),
    `</${root}>`,
    '',
  ].join('\n');
}

/** Alphabetical element order, as the Salesforce CLI writes source files. */
function sorted(node: XmlNode): XmlNode {
  return Object.fromEntries(Object.entries(node).sort(([a], [b]) => a.localeCompare(b)));
}

function fieldFile(field: (typeof FIELDS)[number]): string {
  const { fullName, ...rest } = customFieldDefinition(field, 'source');
  return metadataDocument('CustomField', { fullName, ...sorted(rest as XmlNode) });
}

function permissionSetFile(): string {
  const ps = permissionSetDefinition();
  return metadataDocument('PermissionSet', {
    description: ps.description,
    fieldPermissions: ps.fieldPermissions.map((p) => sorted({ ...p })),
    hasActivationRequired: ps.hasActivationRequired,
    label: ps.label,
    objectPermissions: ps.objectPermissions.map((p) => sorted({ ...p })),
  });
}

/** The app itself: who it is and where it may be used. OAuth lives in the two settings files below. */
function externalClientAppFile(): string {
  return metadataDocument('ExternalClientApplication', {
    contactEmail: EXTERNAL_CLIENT_APP.contactEmail,
    description: EXTERNAL_CLIENT_APP.description,
    distributionState: EXTERNAL_CLIENT_APP.distributionState,
    isProtected: false,
    label: EXTERNAL_CLIENT_APP.label,
  });
}

/** The OAuth plugin's scopes. */
function oauthSettingsFile(): string {
  return metadataDocument('ExtlClntAppOauthSettings', {
    commaSeparatedOauthScopes: EXTERNAL_CLIENT_APP.scopes.join(', '),
    externalClientApplication: EXTERNAL_CLIENT_APP.name,
    label: EXTERNAL_CLIENT_APP.oauthSettingsName,
  });
}

/**
 * The OAuth plugin's global settings: callback URL and PKCE. Salesforce generates the consumer key and secret
 * at deploy; they never belong in source control, so this file names neither.
 */
function globalOauthSettingsFile(appUrl: string): string {
  return metadataDocument('ExtlClntAppGlobalOauthSettings', {
    callbackUrl: `${appUrl}/oauth/salesforce/callback`,
    externalClientApplication: EXTERNAL_CLIENT_APP.name,
    isConsumerSecretOptional: false,
    isIntrospectAllTokens: false,
    isPkceRequired: true,
    isSecretRequiredForRefreshToken: true,
    label: EXTERNAL_CLIENT_APP.globalOauthSettingsName,
    shouldRotateConsumerKey: false,
    shouldRotateConsumerSecret: false,
  });
}

function packageFile(apiVersion: string): string {
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<Package xmlns="${METADATA_NS}">`,
    ...renderElement(
      'types',
      { members: [EXTERNAL_CLIENT_APP.globalOauthSettingsName], name: 'ExtlClntAppGlobalOauthSettings' },
      1,
    ),
    ...renderElement(
      'types',
      { members: [EXTERNAL_CLIENT_APP.oauthSettingsName], name: 'ExtlClntAppOauthSettings' },
      1,
    ),
    ...renderElement('types', { members: [EXTERNAL_CLIENT_APP.name], name: 'ExternalClientApplication' }, 1),
    ...renderElement(
      'types',
      { members: FIELDS.map((f) => `${ACCOUNT_SOBJECT}.${f.salesforce}`).sort(), name: 'CustomField' },
      1,
    ),
    ...renderElement('types', { members: [PERMISSION_SET.name], name: 'PermissionSet' }, 1),
    `    <version>${apiVersion}</version>`,
    '</Package>',
    '',
  ].join('\n');
}

function projectFile(apiVersion: string): string {
  const project = {
    packageDirectories: [{ path: 'force-app', default: true }],
    name: 'report-connector',
    namespace: '',
    sfdcLoginUrl: 'https://login.salesforce.com',
    sourceApiVersion: apiVersion,
  };
  return `${JSON.stringify(project, null, 2)}\n`;
}

function readme(appUrl: string): string {
  return [
    '# Salesforce metadata for the report connector',
    '',
    'Generated by `writeSalesforceManifests` (connectors/salesforce/manifest.ts) from the field table in',
    'src/fields.ts; do not edit by hand (`report-connector manifests --app-url <APP_URL>` regenerates it).',
    '',
    'It holds the Account fields, the `Report_Connector` permission set and the `Report_Connector` External',
    'Client App (OAuth with PKCE, scopes `api` and `refresh_token`). Salesforce no longer lets orgs create',
    'connected apps, through Setup or the Metadata API; an External Client App takes its place.',
    '',
    `The callback URL is \`${appUrl}/oauth/salesforce/callback\`: regenerate with your APP_URL before deploying.`,
    '',
    '1. Setup > External Client App Settings: external client apps must be allowed in the org',
    '   (`ExternalClientAppSettings.enableExternalClientApps`).',
    '2. Deploy (the deploying user needs "Customize Application" and "Modify Metadata"):',
    '',
    '       sf project deploy start --manifest manifest/package.xml --target-org <alias>',
    '',
    '3. Setup > External Client App Manager > Report Connector > Settings > OAuth Settings > Consumer Key and',
    '   Secret: copy them into SALESFORCE_CLIENT_ID and SALESFORCE_CLIENT_SECRET and restart the connector.',
    '4. Give the integration user the fields:',
    '',
    '       sf org assign permset --name Report_Connector --target-org <alias> --on-behalf-of <integration user>',
    '',
    '5. Open /admin and connect Salesforce. The app is installed in this org, so users may authorise it',
    '   without the "Approve Uninstalled Connected Apps" permission.',
    '',
    'The app creates the same fields and permission set itself at install when the installing user may modify',
    'metadata; step 2 is then only needed for the External Client App.',
    '',
  ].join('\n');
}

export interface SalesforceProjectOptions {
  appUrl: string;
  apiVersion?: string;
}

/** Every file of the SFDX project, keyed by its path relative to the project root. */
export function salesforceProjectFiles(options: SalesforceProjectOptions): Record<string, string> {
  const appUrl = options.appUrl.replace(/\/+$/, '');
  const apiVersion = options.apiVersion ?? DEFAULT_API_VERSION;
  const base = 'force-app/main/default';
  const files: Record<string, string> = {
    'README.md': readme(appUrl),
    'sfdx-project.json': projectFile(apiVersion),
    'manifest/package.xml': packageFile(apiVersion),
    [`${base}/permissionsets/${PERMISSION_SET.name}.permissionset-meta.xml`]: permissionSetFile(),
    [`${base}/externalClientApps/${EXTERNAL_CLIENT_APP.name}.eca-meta.xml`]: externalClientAppFile(),
    [`${base}/extlClntAppOauthSettings/${EXTERNAL_CLIENT_APP.oauthSettingsName}.ecaOauth-meta.xml`]:
      oauthSettingsFile(),
    [`${base}/extlClntAppGlobalOauthSets/${EXTERNAL_CLIENT_APP.globalOauthSettingsName}.ecaGlblOauth-meta.xml`]:
      globalOauthSettingsFile(appUrl),
  };
  for (const field of FIELDS) {
    files[`${base}/objects/${ACCOUNT_SOBJECT}/fields/${field.salesforce}.field-meta.xml`] = fieldFile(field);
  }
  return files;
}

export async function writeSalesforceManifests(dir: string, appUrl: string): Promise<string[]> {
  const files = salesforceProjectFiles({ appUrl });
  for (const [path, content] of Object.entries(files)) {
    const target = join(dir, path);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, content, 'utf8');
  }
  return Object.keys(files).sort();
}
