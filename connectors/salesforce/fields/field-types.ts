import type { FieldKind } from '../../../src/fields.js';
import { ACCOUNT_SOBJECT, PERMISSION_SET } from '../provider.js';
import { SALESFORCE_FIELDS, type SalesforceField } from './field-names.js';

/**
 * How each FieldKind becomes a Salesforce custom field. The Metadata API calls at install and the committed
 * SFDX manifests both read this one table, so they cannot disagree.
 *
 * `status` is Text(32), not a Picklist: the values are machine states that only the connector writes, a
 * restricted picklist would refuse a status added in a later release until the org's metadata is redeployed,
 * an unrestricted one validates nothing, and reports and list views filter a text field just as well.
 */

export type SalesforceFieldType = 'Text' | 'LongTextArea' | 'Number' | 'DateTime' | 'Url';

/** The properties that decide whether an existing field matches (labels and help text are left to admins). */
export interface SalesforceFieldShape {
  type: SalesforceFieldType;
  length?: number;
  precision?: number;
  scale?: number;
  visibleLines?: number;
}

const DEFAULT_TEXT_LENGTH = 255;
const LONG_TEXT_VISIBLE_LINES = 5;

export const FIELD_KIND_TO_SALESFORCE: Record<FieldKind, (field: SalesforceField) => SalesforceFieldShape> = {
  text: (f) => ({ type: 'Text', length: f.length ?? DEFAULT_TEXT_LENGTH }),
  longText: (f) => ({
    type: 'LongTextArea',
    length: f.length ?? 32768,
    visibleLines: LONG_TEXT_VISIBLE_LINES,
  }),
  // The contract: scores are written as received into Number(18, 6).
  number: () => ({ type: 'Number', precision: 18, scale: 6 }),
  datetime: () => ({ type: 'DateTime' }),
  url: () => ({ type: 'Url' }),
  status: (f) => ({ type: 'Text', length: f.length ?? 32 }),
};

export function salesforceShape(field: SalesforceField): SalesforceFieldShape {
  return FIELD_KIND_TO_SALESFORCE[field.kind](field);
}

/** A CustomField definition: the Metadata API wants `Account.X__c`, the SFDX source file wants `X__c`. */
export interface CustomFieldDefinition extends SalesforceFieldShape {
  fullName: string;
  label: string;
  description: string;
  inlineHelpText: string;
  externalId?: boolean;
  required?: boolean;
  unique?: boolean;
  trackHistory?: boolean;
}

export function customFieldDefinition(
  field: SalesforceField,
  form: 'metadataApi' | 'source',
): CustomFieldDefinition {
  const shape = salesforceShape(field);
  const base: CustomFieldDefinition = {
    fullName: form === 'metadataApi' ? `${ACCOUNT_SOBJECT}.${field.salesforce}` : field.salesforce,
    label: field.label,
    description: field.description,
    inlineHelpText: field.description,
    ...shape,
  };
  // Text-like and number fields carry these flags in source form; DateTime, Url and long text reject some.
  if (shape.type === 'Text' || shape.type === 'Number') {
    return { ...base, externalId: false, required: false, unique: false };
  }
  return base;
}

export function accountFieldFullName(field: SalesforceField): string {
  return `${ACCOUNT_SOBJECT}.${field.salesforce}`;
}

export interface PermissionSetDefinition {
  fullName: string;
  label: string;
  description: string;
  hasActivationRequired: boolean;
  fieldPermissions: { editable: boolean; field: string; readable: boolean }[];
  objectPermissions: {
    allowCreate: boolean;
    allowDelete: boolean;
    allowEdit: boolean;
    allowRead: boolean;
    modifyAllRecords: boolean;
    object: string;
    viewAllRecords: boolean;
  }[];
}

/** Read and edit on every connector field, and read/edit on Account itself (sharing still decides which records). */
export function permissionSetDefinition(
  fields: readonly SalesforceField[] = SALESFORCE_FIELDS,
): PermissionSetDefinition {
  return {
    fullName: PERMISSION_SET.name,
    label: PERMISSION_SET.label,
    description: PERMISSION_SET.description,
    hasActivationRequired: false,
    fieldPermissions: fields.map((f) => ({ editable: true, field: accountFieldFullName(f), readable: true })),
    objectPermissions: [
      {
        allowCreate: false,
        allowDelete: false,
        allowEdit: true,
        allowRead: true,
        modifyAllRecords: false,
        object: ACCOUNT_SOBJECT,
        viewAllRecords: false,
      },
    ],
  };
}

/** Whether an existing field (as the Metadata API reads it back) has the shape the connector needs. */
export function shapeMatches(
  wanted: SalesforceFieldShape,
  actual: Partial<Record<keyof SalesforceFieldShape, unknown>>,
): boolean {
  if (actual.type !== wanted.type) return false;
  const numeric = (v: unknown) => (v === undefined || v === null || v === '' ? undefined : Number(v));
  if (wanted.length !== undefined && numeric(actual.length) !== wanted.length) return false;
  if (wanted.precision !== undefined && numeric(actual.precision) !== wanted.precision) return false;
  if (wanted.scale !== undefined && numeric(actual.scale) !== wanted.scale) return false;
  return true;
}
