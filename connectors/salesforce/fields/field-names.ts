import { FIELDS, type FieldDefinition, type FieldKey } from '../../../src/fields.js';

/** The Salesforce Account custom field of each field of the FIELDS table (CONTRACT.md, "Fields written on the CRM record"). */
export const SALESFORCE_FIELD_NAMES: Readonly<Record<FieldKey, string>> = {
  slug: 'Report_Slug__c',
  score: 'Report_Score__c',
  band: 'Report_Band__c',
  scoredAt: 'Report_Scored_At__c',
  pillars: 'Report_Pillars__c',
  verifiedScore: 'Report_Verified_Score__c',
  verdict: 'Report_Verdict__c',
  verifiedAt: 'Report_Verified_At__c',
  reportUrl: 'Report_URL__c',
  matchStatus: 'Report_Match_Status__c',
  syncedAt: 'Report_Synced_At__c',
  alert: 'Report_Alert__c',
  alertAt: 'Report_Alert_At__c',
  linkSource: 'Report_Link_Source__c',
  scorePrevious: 'Report_Score_Previous__c',
};

/** A field of the FIELDS table with its Salesforce API name. */
export interface SalesforceField extends FieldDefinition {
  salesforce: string;
}

/** The FIELDS table as Salesforce names it, in FIELDS order. */
export const SALESFORCE_FIELDS: readonly SalesforceField[] = FIELDS.map((f) => ({
  ...f,
  salesforce: SALESFORCE_FIELD_NAMES[f.key],
}));

export function salesforceField(key: FieldKey): SalesforceField {
  const field = SALESFORCE_FIELDS.find((f) => f.key === key);
  if (!field) throw new Error(`unknown field key ${key}`);
  return field;
}
