import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { markGenerated } from '../../../src/crm/generated-mark.js';
import { ConfigError } from '../../../src/env-schema.js';
import { SALESFORCE_FIELDS } from '../fields/field-names.js';
import { customFieldDefinition, type PermissionSetDefinition } from '../fields/field-types.js';
import { allPermissionSetDefinitions } from '../fields/permission-sets.js';
import {
  ACCOUNT_SOBJECT,
  CHANGE_EVENT_MEMBER,
  DEFAULT_API_VERSION,
  EXTERNAL_CLIENT_APP,
  GLOBAL_OAUTH_SETTINGS,
  OAUTH_POLICIES,
  PACKAGE_NAME,
  SFDX_DIRECTORIES,
} from '../provider.js';
import {
  RECORD_COMPONENT,
  RECORD_COMPONENT_BUNDLES,
  recordComponentFiles,
} from '../record-page/record-component.js';
import { REPORT_FIELDS_MODULE } from '../record-page/report-fields-module.js';
import { SELLER_WORDS_MODULE } from '../record-page/seller-words-module.js';
import { METADATA_NS, metadataDocument, renderElement, type XmlNode } from './metadata-xml.js';

/**
 * The SFDX project in manifests/salesforce, laid out as a second-generation managed package: `app/` holds the
 * External Client App (OAuth web server flow with PKCE) and its OAuth settings and becomes the package;
 * `app-owner/` holds the app's global OAuth settings and its OAuth policies for the org that owns it; `unpackaged/` the connector's
 * Account fields, its three permission sets, the Account record component and its optional record page
 * (record-component.ts), which never join the package so they never take its namespace (see SFDX_DIRECTORIES). test/salesforce-manifest.test.ts converts each directory with
 * @salesforce/source-deploy-retrieve, the library behind the Salesforce CLI, so every file is one it
 * recognises. Generated from FIELDS and the same field-type table the Metadata API calls use; the test fails
 * when the committed files drift from this output.
 */

export const PLACEHOLDER_APP_URL = 'https://report-connector.example.com';

/** Alphabetical element order, as the Salesforce CLI writes source files. */
function sorted(node: XmlNode): XmlNode {
  return Object.fromEntries(Object.entries(node).sort(([a], [b]) => a.localeCompare(b)));
}

function fieldFile(field: (typeof SALESFORCE_FIELDS)[number]): string {
  const { fullName, ...rest } = customFieldDefinition(field, 'source');
  return metadataDocument('CustomField', { fullName, ...sorted(rest as XmlNode) });
}

function permissionSetFile(ps: PermissionSetDefinition): string {
  return metadataDocument('PermissionSet', {
    description: ps.description,
    fieldPermissions: ps.fieldPermissions.map((p) => sorted({ ...p })),
    hasActivationRequired: ps.hasActivationRequired,
    label: ps.label,
    objectPermissions: ps.objectPermissions.map((p) => sorted({ ...p })),
  });
}

/**
 * Account selected for Change Data Capture on the standard channel: the Pub/Sub stream (changes/cdc-stream.ts)
 * has events to read. Outside the package, as the fields are: an org's CDC selections are its own, and an
 * edition's entity limit may refuse it (the org then stays on the poll).
 */
function changeEventMemberFile(): string {
  return metadataDocument('PlatformEventChannelMember', {
    eventChannel: CHANGE_EVENT_MEMBER.eventChannel,
    selectedEntity: CHANGE_EVENT_MEMBER.selectedEntity,
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

/** The OAuth policies (see OAUTH_POLICIES): an installing org's admin may change them. */
function oauthPoliciesFile(): string {
  return metadataDocument('ExtlClntAppOauthConfigurablePolicies', {
    externalClientApplication: EXTERNAL_CLIENT_APP.name,
    ipRelaxationPolicyType: OAUTH_POLICIES.ipRelaxationPolicyType,
    label: EXTERNAL_CLIENT_APP.oauthPoliciesName,
    permittedUsersPolicyType: OAUTH_POLICIES.permittedUsersPolicyType,
    refreshTokenPolicyType: OAUTH_POLICIES.refreshTokenPolicyType,
    refreshTokenValidityPeriod: OAUTH_POLICIES.refreshTokenValidityPeriod,
    refreshTokenValidityUnit: OAUTH_POLICIES.refreshTokenValidityUnit,
  });
}

/**
 * The OAuth plugin's scopes, and once the app's source org has made one, its `oauthLink`: the value that ties
 * every copy installed from the package to the source org's consumer (one key for every subscriber).
 */
function oauthSettingsFile(oauthLink: string | undefined): string {
  return metadataDocument('ExtlClntAppOauthSettings', {
    commaSeparatedOauthScopes: EXTERNAL_CLIENT_APP.scopes.join(', '),
    externalClientApplication: EXTERNAL_CLIENT_APP.name,
    label: EXTERNAL_CLIENT_APP.oauthSettingsName,
    oauthLink,
  });
}

/**
 * The OAuth plugin's global settings: callback URL, PKCE and refresh token rotation (GLOBAL_OAUTH_SETTINGS).
 * Salesforce generates the consumer key and secret at deploy; they never belong in source control, so this file
 * names neither.
 */
function globalOauthSettingsFile(appUrl: string): string {
  return metadataDocument('ExtlClntAppGlobalOauthSettings', {
    callbackUrl: `${appUrl}/oauth/salesforce/callback`,
    externalClientApplication: EXTERNAL_CLIENT_APP.name,
    isConsumerSecretOptional: false,
    isIntrospectAllTokens: false,
    isPkceRequired: GLOBAL_OAUTH_SETTINGS.pkceRequired,
    isRefreshTokenRotationEnabled: GLOBAL_OAUTH_SETTINGS.refreshTokenRotation,
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
      { members: [EXTERNAL_CLIENT_APP.oauthPoliciesName], name: 'ExtlClntAppOauthConfigurablePolicies' },
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
      {
        members: SALESFORCE_FIELDS.map((f) => `${ACCOUNT_SOBJECT}.${f.salesforce}`).sort(),
        name: 'CustomField',
      },
      1,
    ),
    ...renderElement('types', { members: [RECORD_COMPONENT.flexiPage], name: 'FlexiPage' }, 1),
    ...renderElement(
      'types',
      { members: [...RECORD_COMPONENT_BUNDLES], name: 'LightningComponentBundle' },
      1,
    ),
    ...renderElement(
      'types',
      {
        members: allPermissionSetDefinitions()
          .map((ps) => ps.fullName)
          .sort(),
        name: 'PermissionSet',
      },
      1,
    ),
    ...renderElement(
      'types',
      { members: [CHANGE_EVENT_MEMBER.fullName], name: 'PlatformEventChannelMember' },
      1,
    ),
    `    <version>${apiVersion}</version>`,
    '</Package>',
    '',
  ].join('\n');
}

function projectFile(apiVersion: string, namespace: string): string {
  const project = {
    packageDirectories: [
      {
        path: SFDX_DIRECTORIES.app,
        package: PACKAGE_NAME,
        versionName: 'Report Connector',
        versionNumber: '1.0.0.NEXT',
        default: true,
      },
      { path: SFDX_DIRECTORIES.owner, default: false },
      { path: SFDX_DIRECTORIES.unpackaged, default: false },
    ],
    name: 'report-connector',
    namespace,
    sfdcLoginUrl: 'https://login.salesforce.com',
    sourceApiVersion: apiVersion,
  };
  return `${JSON.stringify(project, null, 2)}\n`;
}

function readme(appUrl: string): string {
  return [
    ...readmeIntro(appUrl),
    ...readmeLayout(),
    ...readmeOneOrg(),
    ...readmeAppPerOrg(appUrl),
    ...readmePackage(appUrl),
  ].join('\n');
}

/** What the project is, where it comes from, and the callback URL it was generated for. */
function readmeIntro(appUrl: string): string[] {
  return [
    '# Salesforce metadata for the report connector',
    '',
    'Generated by `writeSalesforceManifests` (connectors/salesforce/manifest/manifest.ts) from the field table in',
    'src/fields.ts; do not edit by hand (`report-connector manifests --app-url <APP_URL>` regenerates it;',
    `\`${PACKAGE_ENV.namespace}\` and \`${PACKAGE_ENV.oauthLink}\` add the package's namespace and the app's oauthLink).`,
    'Each generated file says so at its top (an XML file in the first line inside its root element), but',
    '`sfdx-project.json`: JSON has no comments.',
    '',
    `The callback URL is \`${appUrl}/oauth/salesforce/callback\`: regenerate with your APP_URL before deploying.`,
    '',
  ];
}

/** Which directory holds what, and why the fields and permission sets stay out of the package. */
function readmeLayout(): string[] {
  const { app, owner, unpackaged } = SFDX_DIRECTORIES;
  return [
    '## What is where',
    '',
    `- \`${app}/\`: the managed package: the \`Report_Connector\` External Client App (distribution state`,
    '  `Packaged`) and its OAuth settings (scopes `api`, `refresh_token`; the `oauthLink` once the source org',
    '  has made one).',
    `- \`${owner}/\`: what the org that owns the app deploys beside the package and never packages: the app's`,
    '  global OAuth settings (callback URL, PKCE required, refresh token rotation; Salesforce makes the consumer',
    "  key and secret, which no file names) and that org's OAuth policies (refresh tokens expiring after 30 days",
    "  unused, the org's IP restrictions enforced). An installing org's admin sets its own policies in Setup.",
    `- \`${unpackaged}/\`: the Account fields (\`Report_*__c\`), the permission sets \`Report_Connector\` (the`,
    '  integration user: read and edit), `Report_Viewer` (sellers: read) and `Report_Editor` (read, and edit on',
    `  \`Report_Slug__c\` only), the \`${RECORD_COMPONENT.name}\` component for Account record pages with the modules of`,
    `  its words (\`${SELLER_WORDS_MODULE.name}\`, the HubSpot card's words with their types removed) and of the fields it`,
    `  reads (\`${REPORT_FIELDS_MODULE.name}\`, from the field table), and an optional record page placing it`,
    `  (\`${RECORD_COMPONENT.flexiPage}\`, never the org default). They stay out of the package, so`,
    '  they never take its namespace and keep the names CONTRACT.md gives them. The connector creates the fields',
    '  and the three permission sets itself at install when the installing user may modify metadata; the',
    '  component and the page reach an org only by deploying this directory.',
    '- `manifest/package.xml`: every component, for deploying all of it into one org.',
    '',
  ];
}

/** Installing into one org with a Local app. */
function readmeOneOrg(): string[] {
  const { app } = SFDX_DIRECTORIES;
  return [
    '## One org: a Local app',
    '',
    `1. In \`${app}/main/default/externalClientApps/Report_Connector.eca-meta.xml\` set \`distributionState\` to`,
    '   `Local` (the app is then used by this org only), and deploy everything (the deploying user needs',
    '   "Customize Application" and "Modify Metadata"):',
    '',
    '       sf project deploy start --manifest manifest/package.xml --target-org <alias>',
    '',
    '2. Setup > External Client App Manager > Report Connector > Settings > OAuth Settings > Consumer Key and',
    '   Secret: copy them into SALESFORCE_CLIENT_ID and SALESFORCE_CLIENT_SECRET and restart the connector.',
    '3. Give the integration user the fields, and sellers (or RevOps, with Report_Editor) read access:',
    '',
    '       sf org assign permset --name Report_Connector --target-org <alias> --on-behalf-of <integration user>',
    '       sf org assign permset --name Report_Viewer --target-org <alias> --on-behalf-of <seller username>',
    '',
    `   Then open an Account, Edit Page, and drag "${RECORD_COMPONENT.label}" onto it (or activate`,
    `   "${RECORD_COMPONENT.flexiPageLabel}"); set its Installation id to \`salesforce-<18-character org id>\`.`,
    '',
    '4. Open /admin and connect Salesforce. The app is owned by this org, so its users may authorise it without',
    '   the "Approve Uninstalled Connected Apps" permission.',
    '',
  ];
}

/** Many orgs, each with an app of its own added as a connection. */
function readmeAppPerOrg(appUrl: string): string[] {
  return [
    '## Many orgs, an app each',
    '',
    'A Local app works only in the org that owns it. Each further org deploys the app into itself as in',
    `"One org" (or creates one in Setup with the callback URL above and PKCE), and the connector's`,
    "operator adds its keys as a Salesforce connection; the org installs through that connection's link:",
    '',
    '    curl -X POST -H "Authorization: Bearer $ADMIN_TOKEN" -H "Content-Type: application/json" \\',
    '      -d \'{"label":"Acme","consumerKey":"...","consumerSecret":"...","loginUrl":"https://acme.my.salesforce.com"}\' \\',
    `      ${appUrl}/admin/api/salesforce/connections`,
    '',
    'The answer carries `installLink` (`/oauth/salesforce/install?connection=<id>`).',
    '',
  ];
}

/** Many orgs with one packaged app, step by step. */
function readmePackage(appUrl: string): string[] {
  const { app, owner, unpackaged } = SFDX_DIRECTORIES;
  const settings = `${EXTERNAL_CLIENT_APP.oauthSettingsName}`;
  return [
    '## Many orgs, one packaged app (second-generation managed package)',
    '',
    'Steps marked NEEDS A DEV HUB were never run by us (we have no Dev Hub and no namespace). What runs offline',
    "runs in the tests (test/salesforce-package.test.ts): this project's sfdx-project.json against the Salesforce",
    "CLI's own schema (@salesforce/core), the conversion of each directory with @salesforce/source-deploy-retrieve",
    "(the CLI's converter), the package directory's contents with and without an oauthLink, and every metadata",
    "file against the Metadata API's types (@salesforce/types). The `sf` commands run in this directory,",
    "`npx report-connector manifests` in the connector's root.",
    '',
    '1. NEEDS A DEV HUB. Choose the org that will own the package and the app for as long as any customer uses',
    '   them (a production org or your Partner Business Org; not a scratch org or sandbox, whose apps cannot be',
    '   packaged). Setup > Dev Hub > Enable Dev Hub, then Enable Unlocked Packages and Second-Generation Managed',
    '   Packages. Log the CLI in to it:',
    '',
    '       sf org login web --set-default-dev-hub --alias devhub',
    '',
    '2. NEEDS A DEV HUB. Register a namespace: sign up for a separate Developer Edition org, Setup > Package',
    '   Manager > Namespace Settings > Edit, enter a prefix, Check Availability, Save. In the Dev Hub (My Domain',
    '   deployed), App Launcher > Namespace Registries > Link Namespace, and log in to that Developer Edition org.',
    "   Regenerate with it (it becomes `namespace` in sfdx-project.json and prefixes the package's components only;",
    `   nothing in \`${unpackaged}/\` is in the package):`,
    '',
    `       ${PACKAGE_ENV.namespace}=<prefix> npx report-connector manifests --app-url ${appUrl}`,
    '',
    '3. NEEDS A DEV HUB. Deploy the app into the Dev Hub, which becomes its source org: Salesforce makes the',
    "   consumer key and secret there and writes the `oauthLink` into the app's OAuth settings:",
    '',
    `       sf project deploy start --source-dir ${app} --source-dir ${owner} --target-org devhub`,
    '',
    `4. NEEDS A DEV HUB. Retrieve the OAuth settings with their \`oauthLink\` into \`${app}/\`, then regenerate with`,
    '   the value, so that the generator keeps it (regenerating without it drops it):',
    '',
    `       sf project retrieve start --metadata ExtlClntAppOauthSettings:${settings} --target-org devhub`,
    `       ${PACKAGE_ENV.namespace}=<prefix> ${PACKAGE_ENV.oauthLink}=<oauthLink> npx report-connector manifests --app-url ${appUrl}`,
    '',
    "   The packaged OAuth settings carry the link, so every org that installs the package uses the Dev Hub's",
    '   consumer: one key and secret for all of them.',
    '5. NEEDS A DEV HUB. Create the package once, then a version, then promote it. `sf package create` adds',
    '   `packageAliases` to sfdx-project.json and regenerating rewrites that file, so name the package and the',
    '   version by their ids (`0Ho...`, `04t...`) as the commands print them:',
    '',
    `       sf package create --name "${PACKAGE_NAME}" --package-type Managed --path ${app} --target-dev-hub devhub`,
    '       sf package version create --package 0Ho... --installation-key-bypass --code-coverage --wait 30 --target-dev-hub devhub',
    '       sf package version promote --package 04t... --target-dev-hub devhub',
    '',
    "6. NEEDS A DEV HUB. Set SALESFORCE_CLIENT_ID and SALESFORCE_CLIENT_SECRET to the Dev Hub app's consumer key",
    '   and secret (External Client App Manager > Report Connector > Settings > OAuth Settings > Consumer Key and',
    '   Secret) and restart the connector.',
    '7. Each customer org installs the version (`sf package install --package 04t... --target-org <alias> --wait',
    "   10`, or its install URL). Its admin sets the app's policies (External Client App Manager > Report",
    '   Connector > Policies: who may authorise it, refresh token expiry, IP relaxation) and connects at /admin;',
    `   the connector creates the fields, or the org deploys \`${unpackaged}/\` itself`,
    `   (\`sf project deploy start --source-dir ${unpackaged} --target-org <alias>\`).`,
    '',
    'Outside the package, and why: the global OAuth settings (consumer credentials stay in the source org;',
    "Salesforce never packages them), the OAuth policies (each installing org's admin sets its own), the fields,",
    "permission sets, component and page (no namespace on CONTRACT.md's names), and `manifest/package.xml`.",
    '',
  ];
}

export interface SalesforceProjectOptions {
  appUrl: string;
  apiVersion?: string;
  /** The package's registered namespace prefix (sfdx-project.json `namespace`); empty until registered. */
  namespace?: string;
  /** The app's `oauthLink`, as retrieved from its source org after the first deploy there. */
  oauthLink?: string;
}

/** The environment variables the `manifests` command reads for the managed package. */
export const PACKAGE_ENV = {
  namespace: 'SALESFORCE_PACKAGE_NAMESPACE',
  oauthLink: 'SALESFORCE_ECA_OAUTH_LINK',
} as const;

/**
 * The package options from the environment, checked: a namespace prefix is 1 to 15 letters and digits starting
 * with a letter (no underscores); an oauthLink is one token with no spaces or markup.
 */
export function salesforcePackageOptionsFrom(
  env: Readonly<Record<string, string | undefined>> = {},
): Pick<SalesforceProjectOptions, 'namespace' | 'oauthLink'> {
  const namespace = env[PACKAGE_ENV.namespace]?.trim() ?? '';
  if (namespace && !/^[A-Za-z][A-Za-z0-9]{0,14}$/.test(namespace)) {
    throw new ConfigError(
      PACKAGE_ENV.namespace,
      `is ${namespace}, not a namespace prefix: 1 to 15 letters and digits, starting with a letter`,
    );
  }
  const oauthLink = env[PACKAGE_ENV.oauthLink]?.trim() ?? '';
  if (oauthLink && !/^[^\s<>&"']+$/.test(oauthLink)) {
    throw new ConfigError(
      PACKAGE_ENV.oauthLink,
      "is not one token: copy the oauthLink element's text as retrieved",
    );
  }
  return { ...(namespace ? { namespace } : {}), ...(oauthLink ? { oauthLink } : {}) };
}

/** This generator, as the generated files' first line names it. */
const SALESFORCE_MANIFEST_SOURCE = 'connectors/salesforce/manifest/manifest.ts';

/** Every file of the SFDX project, keyed by its path relative to the project root. */
export function salesforceProjectFiles(options: SalesforceProjectOptions): Record<string, string> {
  const appUrl = options.appUrl.replace(/\/+$/, '');
  const apiVersion = options.apiVersion ?? DEFAULT_API_VERSION;
  const app = `${SFDX_DIRECTORIES.app}/main/default`;
  const owner = `${SFDX_DIRECTORIES.owner}/main/default`;
  const unpackaged = `${SFDX_DIRECTORIES.unpackaged}/main/default`;
  const component = recordComponentFiles(unpackaged, appUrl, apiVersion);
  const files: Record<string, string> = {
    'README.md': readme(appUrl),
    'sfdx-project.json': projectFile(apiVersion, options.namespace ?? ''),
    'manifest/package.xml': packageFile(apiVersion),
    [`${app}/externalClientApps/${EXTERNAL_CLIENT_APP.name}.eca-meta.xml`]: externalClientAppFile(),
    [`${app}/extlClntAppOauthSettings/${EXTERNAL_CLIENT_APP.oauthSettingsName}.ecaOauth-meta.xml`]:
      oauthSettingsFile(options.oauthLink),
    [`${owner}/extlClntAppOauthPolicies/${EXTERNAL_CLIENT_APP.oauthPoliciesName}.ecaOauthPlcy-meta.xml`]:
      oauthPoliciesFile(),
    [`${owner}/extlClntAppGlobalOauthSets/${EXTERNAL_CLIENT_APP.globalOauthSettingsName}.ecaGlblOauth-meta.xml`]:
      globalOauthSettingsFile(appUrl),
    // Marked where written (record-component.ts).
    ...component,
  };
  files[
    `${unpackaged}/platformEventChannelMembers/${CHANGE_EVENT_MEMBER.fullName}.platformEventChannelMember-meta.xml`
  ] = changeEventMemberFile();
  for (const ps of allPermissionSetDefinitions()) {
    files[`${unpackaged}/permissionsets/${ps.fullName}.permissionset-meta.xml`] = permissionSetFile(ps);
  }
  for (const field of SALESFORCE_FIELDS) {
    files[`${unpackaged}/objects/${ACCOUNT_SOBJECT}/fields/${field.salesforce}.field-meta.xml`] =
      fieldFile(field);
  }
  for (const [path, content] of Object.entries(files)) {
    if (!(path in component))
      files[path] = markGenerated(path, content, { generator: SALESFORCE_MANIFEST_SOURCE });
  }
  return files;
}

export async function writeSalesforceManifests(
  dir: string,
  appUrl: string,
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<string[]> {
  const files = salesforceProjectFiles({ appUrl, ...salesforcePackageOptionsFrom(env) });
  for (const [path, content] of Object.entries(files)) {
    const target = join(dir, path);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, content, 'utf8');
  }
  return Object.keys(files).sort();
}
