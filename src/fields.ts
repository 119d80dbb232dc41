/**
 * The one source of truth for the fields the connector owns on a CRM record. The HubSpot properties, the
 * Salesforce custom fields, both manifests and the record mapping are all derived from this table, so a field
 * cannot exist in one place and be missing in another (test/hubspot-manifest.test.ts and
 * test/salesforce-manifest.test.ts fail on drift).
 */

export type FieldKind = 'text' | 'longText' | 'number' | 'datetime' | 'url' | 'status';

export interface FieldDefinition {
  /** Key used inside the connector. */
  key: FieldKey;
  label: string;
  description: string;
  kind: FieldKind;
  hubspot: string;
  salesforce: string;
  /** Text length for Salesforce Text fields. */
  length?: number;
}

export const FIELD_KEYS = [
  'slug',
  'score',
  'band',
  'scoredAt',
  'pillars',
  'verifiedScore',
  'verdict',
  'verifiedAt',
  'reportUrl',
  'matchStatus',
  'syncedAt',
  'alert',
  'alertAt',
  'linkSource',
  'scorePrevious',
] as const;
export type FieldKey = (typeof FIELD_KEYS)[number];

export const MATCH_STATUSES = [
  'matched',
  'needs_review',
  'no_match',
  'not_published',
  /** A report was asked for (POST /v1/submissions); the record waits for it to be published. */
  'requested',
  'error',
] as const;
export type MatchStatus = (typeof MATCH_STATUSES)[number];

/**
 * Who made the record's link: the connector's matching (`auto`), a person in the CRM (`person`), an admin on
 * the admin page (`admin`), or a report request (`request`). Only `auto` links are ever reconsidered by
 * matching; on an unlinked `no_match` record a `person`/`admin` source is the decision not to link it.
 */
export const LINK_SOURCES = ['auto', 'person', 'admin', 'request'] as const;
export type LinkSource = (typeof LINK_SOURCES)[number];

export function linkSourceOf(value: unknown): LinkSource | null {
  return typeof value === 'string' && (LINK_SOURCES as readonly string[]).includes(value)
    ? (value as LinkSource)
    : null;
}

export const HUBSPOT_PROPERTY_GROUP = { name: 'report_scores', label: 'Report scores' } as const;

export const FIELDS: readonly FieldDefinition[] = [
  {
    key: 'slug',
    label: 'Report slug',
    description:
      'Slug of the published report this company is linked to. Set it by hand to choose the report.',
    kind: 'text',
    hubspot: 'report_slug',
    salesforce: 'Report_Slug__c',
    length: 255,
  },
  {
    key: 'score',
    label: 'Report score',
    description: 'Overall score of the linked report.',
    kind: 'number',
    hubspot: 'report_score',
    salesforce: 'Report_Score__c',
  },
  {
    key: 'band',
    label: 'Report band',
    description: 'Named band of the overall score.',
    kind: 'text',
    hubspot: 'report_band',
    salesforce: 'Report_Band__c',
    length: 255,
  },
  {
    key: 'scoredAt',
    label: 'Report scored at',
    description: 'When the report was scored.',
    kind: 'datetime',
    hubspot: 'report_scored_at',
    salesforce: 'Report_Scored_At__c',
  },
  {
    key: 'pillars',
    label: 'Report pillars',
    description: 'Pillar scores with their weights.',
    kind: 'longText',
    hubspot: 'report_pillars',
    salesforce: 'Report_Pillars__c',
    length: 32768,
  },
  {
    key: 'verifiedScore',
    label: 'Report verified score',
    description: 'Score after verification; empty when the report is not verified.',
    kind: 'number',
    hubspot: 'report_verified_score',
    salesforce: 'Report_Verified_Score__c',
  },
  {
    key: 'verdict',
    label: 'Report verdict',
    description: 'Outcome of verification; empty when the report is not verified.',
    kind: 'text',
    hubspot: 'report_verdict',
    salesforce: 'Report_Verdict__c',
    length: 255,
  },
  {
    key: 'verifiedAt',
    label: 'Report verified at',
    description: 'When the verification was signed.',
    kind: 'datetime',
    hubspot: 'report_verified_at',
    salesforce: 'Report_Verified_At__c',
  },
  {
    key: 'reportUrl',
    label: 'Report URL',
    description: 'Address of the human-readable report.',
    kind: 'url',
    hubspot: 'report_url',
    salesforce: 'Report_URL__c',
  },
  {
    key: 'matchStatus',
    label: 'Report match status',
    description: 'matched, needs_review, no_match, not_published, requested or error.',
    kind: 'status',
    hubspot: 'report_match_status',
    salesforce: 'Report_Match_Status__c',
    length: 32,
  },
  {
    key: 'syncedAt',
    label: 'Report synced at',
    description: 'When the connector last wrote this record.',
    kind: 'datetime',
    hubspot: 'report_synced_at',
    salesforce: 'Report_Synced_At__c',
  },
  {
    key: 'alert',
    label: 'Report alert',
    description:
      'The latest alert the report service fired for the linked report, as one line (severity, kind, title, message).',
    kind: 'text',
    hubspot: 'report_alert',
    salesforce: 'Report_Alert__c',
    length: 255,
  },
  {
    key: 'alertAt',
    label: 'Report alert at',
    description: 'When that alert fired.',
    kind: 'datetime',
    hubspot: 'report_alert_at',
    salesforce: 'Report_Alert_At__c',
  },
  {
    key: 'linkSource',
    label: 'Report link source',
    description:
      'Who made the link: auto (the connector), person, admin or request. Only auto links are ever reconsidered.',
    kind: 'text',
    hubspot: 'report_link_source',
    salesforce: 'Report_Link_Source__c',
    length: 32,
  },
  {
    key: 'scorePrevious',
    label: 'Report previous score',
    description: 'The overall score before its last change.',
    kind: 'number',
    hubspot: 'report_score_previous',
    salesforce: 'Report_Score_Previous__c',
  },
];

export function fieldByKey(key: FieldKey): FieldDefinition {
  const field = FIELDS.find((f) => f.key === key);
  if (!field) throw new Error(`unknown field key ${key}`);
  return field;
}

/**
 * Values of the connector's fields. `null` means empty (the CRM field is cleared). Numbers stay numbers and
 * timestamps stay ISO 8601 strings; each connector converts to its wire format.
 */
export type FieldValue = string | number | null;
export type FieldValues = { [K in FieldKey]: FieldValue };
