import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { markGenerated } from '../../../src/crm/generated-mark.js';
import { findProjectRoot } from '../../../src/util/project-root.js';
import { escapeXml, METADATA_NS, metadataDocument } from '../manifest/metadata-xml.js';
import { ACCOUNT_SOBJECT } from '../provider.js';
import { REPORT_FIELDS_MODULE, reportFieldsFiles } from './report-fields-module.js';
import { SELLER_WORDS_MODULE, sellerWordsFiles } from './seller-words-module.js';

/**
 * The seller-facing part of the SFDX project: the `reportScore` Lightning web component for Account record
 * pages, and an optional Lightning record page (FlexiPage) that places it. The component's code is kept as
 * real files in connectors/salesforce/record-page/lwc/reportScore (tested with sfdx-lwc-jest in test/lwc) and copied into
 * the project as is; its configuration file is generated here because it carries the connector's address. Its
 * words come from the LWC module `c/sellerWords` (seller-words-module.ts) and the names of the fields it reads
 * from `c/reportFields` (report-fields-module.ts), both written beside it.
 *
 * The FlexiPage is never made the org default: that takes an action override on Account (or activation in
 * Lightning App Builder), and the project holds neither; an admin activates it, or adds the component to the
 * page they already use.
 */

export const RECORD_COMPONENT = {
  name: 'reportScore',
  label: 'Report Score',
  description:
    "The Account's report score, pillars, verification and link state, read from the report connector's fields.",
  flexiPage: 'Account_Report_Record_Page',
  flexiPageLabel: 'Account Record Page with Report',
} as const;

/** Every LWC bundle the project holds: the component and the modules it imports. */
export const RECORD_COMPONENT_BUNDLES: readonly string[] = [
  RECORD_COMPONENT.name,
  REPORT_FIELDS_MODULE.name,
  SELLER_WORDS_MODULE.name,
].sort();

/** The component's source folder, relative to the repository's root. */
const RECORD_COMPONENT_SOURCE_DIR = `connectors/salesforce/record-page/lwc/${RECORD_COMPONENT.name}`;

/** The component's source folder in this repository. */
export function recordComponentSourceDir(): string {
  return join(findProjectRoot(), ...RECORD_COMPONENT_SOURCE_DIR.split('/'));
}

/**
 * The bundle's code files (JavaScript, HTML, CSS), keyed by file name. Tests live in test/lwc, so nothing
 * here but the component ships.
 */
export function recordComponentSources(): Record<string, string> {
  const dir = recordComponentSourceDir();
  const files: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) {
    if (!/\.(js|html|css)$/.test(name)) continue;
    files[name] = readFileSync(join(dir, name), 'utf8');
  }
  return files;
}

/**
 * The component's configuration: exposed to Lightning App Builder on Account record pages only, with the
 * connector's address (defaulting to the APP_URL the project was generated for) and the installation id as
 * properties an admin sets, because a component cannot read its org's id without Apex.
 */
export function recordComponentMeta(appUrl: string, apiVersion: string): string {
  const prop = (name: string, label: string, description: string, value?: string) =>
    `            <property name="${name}" type="String" label="${escapeXml(label)}" description="${escapeXml(description)}"${
      value === undefined ? '' : ` default="${escapeXml(value)}"`
    }/>`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<LightningComponentBundle xmlns="${METADATA_NS}">`,
    `    <apiVersion>${apiVersion}</apiVersion>`,
    `    <description>${escapeXml(RECORD_COMPONENT.description)}</description>`,
    '    <isExposed>true</isExposed>',
    `    <masterLabel>${escapeXml(RECORD_COMPONENT.label)}</masterLabel>`,
    '    <targets>',
    '        <target>lightning__RecordPage</target>',
    '    </targets>',
    '    <targetConfigs>',
    '        <targetConfig targets="lightning__RecordPage">',
    prop(
      'connectorUrl',
      'Connector address',
      "The report connector's APP_URL. Not used for links: sellers are never sent to the connector's admin page; kept so pages that set it still load.",
      appUrl,
    ),
    prop(
      'installationId',
      'Installation id',
      "This org's installation on the connector (salesforce- followed by the 18-character org id). Not used for links; kept so pages that set it still load.",
    ),
    '            <objects>',
    `                <object>${ACCOUNT_SOBJECT}</object>`,
    '            </objects>',
    '        </targetConfig>',
    '    </targetConfigs>',
    '</LightningComponentBundle>',
    '',
  ].join('\n');
}

function componentInstance(name: string, identifier: string, properties: [string, string][] = []) {
  return {
    itemInstances: {
      componentInstance: {
        componentInstanceProperties:
          properties.length === 0 ? undefined : properties.map(([n, value]) => ({ name: n, value })),
        componentName: name,
        identifier,
      },
    },
  };
}

/**
 * An Account record page: the highlights panel, the record detail beside the report component, and related
 * lists below. A page of its own, built from the standard record template (no parent page, so no region is in
 * Replace mode).
 */
export function recordPageFile(appUrl: string): string {
  return metadataDocument('FlexiPage', {
    description: `Account record page showing the report score (${RECORD_COMPONENT.name}). Never the org default: activate it in Lightning App Builder if wanted.`,
    flexiPageRegions: [
      {
        ...componentInstance('force:highlightsPanel', 'force_highlightsPanel'),
        name: 'header',
        type: 'Region',
      },
      {
        itemInstances: [
          componentInstance('force:detailPanel', 'force_detailPanel').itemInstances,
          componentInstance('force:relatedListContainer', 'force_relatedListContainer').itemInstances,
        ],
        name: 'main',
        type: 'Region',
      },
      {
        ...componentInstance(`c:${RECORD_COMPONENT.name}`, `c_${RECORD_COMPONENT.name}`, [
          ['connectorUrl', appUrl],
        ]),
        name: 'sidebar',
        type: 'Region',
      },
    ],
    masterLabel: RECORD_COMPONENT.flexiPageLabel,
    sobjectType: ACCOUNT_SOBJECT,
    template: { name: 'flexipage:recordHomeTemplateDesktop' },
    type: 'RecordPage',
  });
}

/**
 * Every file of the component, the modules of its words and of its fields, and the page, keyed by path under
 * the given `main/default` directory.
 */
export function recordComponentFiles(
  root: string,
  appUrl: string,
  apiVersion: string,
): Record<string, string> {
  const bundle = `${root}/lwc/${RECORD_COMPONENT.name}`;
  const generator = { generator: 'connectors/salesforce/record-page/record-component.ts' };
  const files: Record<string, string> = {
    ...sellerWordsFiles(root, apiVersion),
    ...reportFieldsFiles(root, apiVersion),
  };
  for (const [name, content] of Object.entries(recordComponentSources())) {
    files[`${bundle}/${name}`] = markGenerated(name, content, {
      copyOf: `${RECORD_COMPONENT_SOURCE_DIR}/${name}`,
    });
  }
  const meta = `${bundle}/${RECORD_COMPONENT.name}.js-meta.xml`;
  files[meta] = markGenerated(meta, recordComponentMeta(appUrl, apiVersion), generator);
  const page = `${root}/flexipages/${RECORD_COMPONENT.flexiPage}.flexipage-meta.xml`;
  files[page] = markGenerated(page, recordPageFile(appUrl), generator);
  return files;
}
