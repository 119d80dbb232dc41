import { ACCOUNT_SOBJECT } from '../provider.js';
import { SALESFORCE_FIELDS, type SalesforceField } from './field-names.js';
import {
  accountFieldFullName,
  type PermissionSetDefinition,
  permissionSetDefinition,
} from './field-types.js';

/**
 * The permission sets for people, beside the integration user's `Report_Connector` (field-types.ts):
 * `Report_Viewer` lets sellers read every Report_* field (the record component shows only what the user may
 * read), `Report_Editor` adds edit on `Report_Slug__c` alone (with read on Account, not edit: a user's effective
 * edit on a field needs edit on its object from some other grant), for RevOps who link a report by hand. Both the
 * SFDX project and the install-time field setup write them from here. Salesforce requires read wherever edit
 * is granted (FieldPermissions.PermissionsEdit needs PermissionsRead).
 */

export const VIEWER_PERMISSION_SET = {
  name: 'Report_Viewer',
  label: 'Report Viewer',
  description: "Read-only access to the report connector's Account fields, for people who look at the score.",
} as const;

export const EDITOR_PERMISSION_SET = {
  name: 'Report_Editor',
  label: 'Report Editor',
  description:
    "Read access to the report connector's Account fields, and edit on Report_Slug__c to link a report by hand.",
} as const;

/** The field people may edit: the link itself. Every other field is the connector's to write. */
export const EDITABLE_BY_PEOPLE = 'slug';

function accountAccess(allowEdit: boolean): PermissionSetDefinition['objectPermissions'][number] {
  return {
    allowCreate: false,
    allowDelete: false,
    allowEdit,
    allowRead: true,
    modifyAllRecords: false,
    object: ACCOUNT_SOBJECT,
    viewAllRecords: false,
  };
}

export function viewerPermissionSetDefinition(
  fields: readonly SalesforceField[] = SALESFORCE_FIELDS,
): PermissionSetDefinition {
  return {
    fullName: VIEWER_PERMISSION_SET.name,
    label: VIEWER_PERMISSION_SET.label,
    description: VIEWER_PERMISSION_SET.description,
    hasActivationRequired: false,
    fieldPermissions: fields.map((f) => ({
      editable: false,
      field: accountFieldFullName(f),
      readable: true,
    })),
    objectPermissions: [accountAccess(false)],
  };
}

export function editorPermissionSetDefinition(
  fields: readonly SalesforceField[] = SALESFORCE_FIELDS,
): PermissionSetDefinition {
  return {
    fullName: EDITOR_PERMISSION_SET.name,
    label: EDITOR_PERMISSION_SET.label,
    description: EDITOR_PERMISSION_SET.description,
    hasActivationRequired: false,
    fieldPermissions: fields.map((f) => ({
      editable: f.key === EDITABLE_BY_PEOPLE,
      field: accountFieldFullName(f),
      readable: true,
    })),
    // Read on Account only: the people who link reports edit Accounts through their own profile or sets, which
    // already grant Account edit; this set adds the slug field alone and never widens who may edit Accounts.
    objectPermissions: [accountAccess(false)],
  };
}

/** Every permission set the connector defines, the integration user's first. */
export function allPermissionSetDefinitions(
  fields: readonly SalesforceField[] = SALESFORCE_FIELDS,
): PermissionSetDefinition[] {
  return [
    permissionSetDefinition(fields),
    viewerPermissionSetDefinition(fields),
    editorPermissionSetDefinition(fields),
  ];
}
