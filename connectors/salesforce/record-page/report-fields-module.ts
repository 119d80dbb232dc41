import { SALESFORCE_FIELDS, type SalesforceField } from '../fields/field-names.js';
import { ACCOUNT_SOBJECT } from '../provider.js';
import { type ServiceModule, serviceModuleFiles } from './service-module.js';

/**
 * The Account fields the reportScore component reads, as an LWC module of their own, `c/reportFields`: the
 * Salesforce API names of SALESFORCE_FIELDS, written into the SFDX project because it is deployed apart from
 * the repository. The component reads every field of the table, in the table's order, and spells no field
 * name itself; test/report-fields.test.ts fails when the committed module differs from this output or the
 * component holds a name of its own.
 */

export const REPORT_FIELDS_MODULE = {
  name: 'reportFields',
  label: 'Report Fields',
  description: 'The Report_* Account fields the report component reads, from the connector’s field table.',
} as const satisfies ServiceModule;

const REPORT_FIELDS_GENERATOR = 'connectors/salesforce/record-page/report-fields-module.ts';

/** A JavaScript string literal in the repository's quote style. */
function quoted(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/**
 * The module's JavaScript: FIELD_NAMES, the API name of each field by its key in the field table, and
 * REPORT_FIELDS, the same fields as getRecord's `optionalFields` name them (object and field).
 */
export function reportFieldsScript(fields: readonly SalesforceField[] = SALESFORCE_FIELDS): string {
  return [
    '/**',
    " * The report connector's Account fields the reportScore component reads: SALESFORCE_FIELD_NAMES of",
    ' * connectors/salesforce/fields/field-names.ts, in the field table’s order. `npm run manifests -- --app-url',
    ' * <APP_URL>` writes this module; test/report-fields.test.ts fails when it differs from the field table.',
    ' */',
    '',
    '/** The API name of each field, by its key in the field table. */',
    'export const FIELD_NAMES = {',
    ...fields.map((f) => `  ${f.key}: ${quoted(f.salesforce)},`),
    '};',
    '',
    '/** Every field as Lightning Data Service names it (object and field), for getRecord’s optionalFields. */',
    `export const REPORT_FIELDS = Object.values(FIELD_NAMES).map((name) => \`${ACCOUNT_SOBJECT}.\${name}\`);`,
    '',
  ].join('\n');
}

/** The module's two files, marked, keyed by path under the given `main/default` directory. */
export function reportFieldsFiles(root: string, apiVersion: string): Record<string, string> {
  return serviceModuleFiles(
    REPORT_FIELDS_MODULE,
    root,
    apiVersion,
    { content: reportFieldsScript(), from: { generator: REPORT_FIELDS_GENERATOR } },
    REPORT_FIELDS_GENERATOR,
  );
}
