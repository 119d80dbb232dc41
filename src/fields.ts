/**
 * The one source of truth for the fields the connector owns on a CRM record, in CRM-neutral terms. Each
 * provider names them in its CRM (connectors/<crm>/fields/field-names.ts) and derives its field definitions, its
 * manifests and its record mapping from this table, so a field cannot exist in one place and be missing in
 * another (each provider's manifest tests fail on drift).
 */

export type FieldKind = 'text' | 'longText' | 'number' | 'datetime' | 'url' | 'status';

export interface FieldDefinition {
  /** Key used inside the connector. */
  key: FieldKey;
  label: string;
  description: string;
  kind: FieldKind;
  /** The longest text the field holds, for CRMs whose text fields have a declared length. */
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

export const FIELDS: readonly FieldDefinition[] = [
  {
    key: 'slug',
    label: 'Report slug',
    description:
      'Slug of the published report this company is linked to. Set it by hand to choose the report.',
    kind: 'text',
    length: 255,
  },
  {
    key: 'score',
    label: 'Report score',
    description: 'Overall score of the linked report.',
    kind: 'number',
  },
  {
    key: 'band',
    label: 'Report band',
    description: 'Named band of the overall score.',
    kind: 'text',
    length: 255,
  },
  {
    key: 'scoredAt',
    label: 'Report scored at',
    description: 'When the report was scored.',
    kind: 'datetime',
  },
  {
    key: 'pillars',
    label: 'Report pillars',
    description: 'Pillar scores with their weights.',
    kind: 'longText',
    length: 32768,
  },
  {
    key: 'verifiedScore',
    label: 'Report verified score',
    description: 'Score after verification; empty when the report is not verified.',
    kind: 'number',
  },
  {
    key: 'verdict',
    label: 'Report verdict',
    description: 'Outcome of verification; empty when the report is not verified.',
    kind: 'text',
    length: 255,
  },
  {
    key: 'verifiedAt',
    label: 'Report verified at',
    description: 'When the verification was signed.',
    kind: 'datetime',
  },
  {
    key: 'reportUrl',
    label: 'Report URL',
    description: 'Address of the human-readable report.',
    kind: 'url',
  },
  {
    key: 'matchStatus',
    label: 'Report match status',
    description: 'matched, needs_review, no_match, not_published, requested or error.',
    kind: 'status',
    length: 32,
  },
  {
    key: 'syncedAt',
    label: 'Report synced at',
    description: 'When the connector last wrote this record.',
    kind: 'datetime',
  },
  {
    key: 'alert',
    label: 'Report alert',
    description:
      'The latest alert the report service fired for the linked report, as one line (severity, kind, title, message).',
    kind: 'text',
    length: 255,
  },
  {
    key: 'alertAt',
    label: 'Report alert at',
    description: 'When that alert fired.',
    kind: 'datetime',
  },
  {
    key: 'linkSource',
    label: 'Report link source',
    description:
      'Who made the link: auto (the connector), person, admin or request. Only auto links are ever reconsidered.',
    kind: 'text',
    length: 32,
  },
  {
    key: 'scorePrevious',
    label: 'Report previous score',
    description: 'The overall score before its last change.',
    kind: 'number',
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
