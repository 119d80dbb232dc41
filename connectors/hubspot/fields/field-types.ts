import { type FieldKind, type FieldValue, MATCH_STATUSES } from '../../../src/fields.js';
import { ValueConversionError } from '../errors.js';
import { HUBSPOT_FIELDS, HUBSPOT_PROPERTY_GROUP, type HubSpotField } from './field-names.js';

/**
 * The HubSpot side of the FIELDS table: property types derived from `FieldKind` in one table, the exact
 * property definitions sent to the API (also written to manifests/hubspot/properties.json), and the value
 * conversions between the connector's values and HubSpot's wire strings.
 */

export type HubSpotPropertyType = 'string' | 'number' | 'datetime' | 'enumeration';
export type HubSpotFieldType = 'text' | 'textarea' | 'number' | 'date' | 'select';

/**
 * `status` is an enumeration (select) rather than free text: HubSpot then offers the five statuses as a
 * dropdown in filters, lists and reports, and refuses a misspelt value instead of storing it. The cost is that
 * a new status needs its option added, which `ensureFields` does by reconciling the options.
 * `url` is plain text: HubSpot has no URL property type.
 */
export const HUBSPOT_TYPE_BY_KIND: Record<
  FieldKind,
  { type: HubSpotPropertyType; fieldType: HubSpotFieldType }
> = {
  text: { type: 'string', fieldType: 'text' },
  longText: { type: 'string', fieldType: 'textarea' },
  number: { type: 'number', fieldType: 'number' },
  datetime: { type: 'datetime', fieldType: 'date' },
  url: { type: 'string', fieldType: 'text' },
  status: { type: 'enumeration', fieldType: 'select' },
};

export interface HubSpotPropertyOption {
  label: string;
  value: string;
  displayOrder: number;
  hidden: boolean;
}

export interface HubSpotPropertyDefinition {
  name: string;
  label: string;
  description: string;
  groupName: string;
  type: HubSpotPropertyType;
  fieldType: HubSpotFieldType;
  displayOrder: number;
  /** Not offered on HubSpot forms: the connector owns these values. */
  formField: boolean;
  options?: HubSpotPropertyOption[];
}

export interface HubSpotPropertyGroupDefinition {
  name: string;
  label: string;
  displayOrder: number;
}

const STATUS_LABELS: Record<(typeof MATCH_STATUSES)[number], string> = {
  matched: 'Matched',
  needs_review: 'Needs review',
  no_match: 'No match',
  not_published: 'Not published',
  requested: 'Report requested',
  error: 'Error',
};

export function hubspotStatusOptions(): HubSpotPropertyOption[] {
  return MATCH_STATUSES.map((value, displayOrder) => ({
    label: STATUS_LABELS[value],
    value,
    displayOrder,
    hidden: false,
  }));
}

export function hubspotPropertyGroup(): HubSpotPropertyGroupDefinition {
  return { name: HUBSPOT_PROPERTY_GROUP.name, label: HUBSPOT_PROPERTY_GROUP.label, displayOrder: -1 };
}

export function hubspotPropertyDefinition(
  field: HubSpotField,
  displayOrder: number,
): HubSpotPropertyDefinition {
  const { type, fieldType } = HUBSPOT_TYPE_BY_KIND[field.kind];
  const definition: HubSpotPropertyDefinition = {
    name: field.hubspot,
    label: field.label,
    description: field.description,
    groupName: HUBSPOT_PROPERTY_GROUP.name,
    type,
    fieldType,
    displayOrder,
    formField: false,
  };
  if (type === 'enumeration') definition.options = hubspotStatusOptions();
  return definition;
}

/** Every property the connector owns, in FIELDS order. */
export function hubspotPropertyDefinitions(): HubSpotPropertyDefinition[] {
  return HUBSPOT_FIELDS.map((field, index) => hubspotPropertyDefinition(field, index));
}

/** HubSpot property names the connector reads on every company. */
export function hubspotOwnPropertyNames(): string[] {
  return HUBSPOT_FIELDS.map((f) => f.hubspot);
}

/** Digits only: HubSpot's millisecond timestamps. `new Date("1714560000000")` would be Invalid Date. */
const EPOCH_MS = /^-?\d+$/;

/**
 * A connector value to HubSpot's wire string. `null` becomes "" (HubSpot clears the property). Datetimes go
 * as epoch milliseconds, the format HubSpot documents for every API; numbers are sent as received.
 */
export function toHubSpotValue(field: HubSpotField, value: FieldValue): string {
  if (value === null) return '';
  switch (field.kind) {
    case 'number': {
      const n = typeof value === 'number' ? value : Number(value);
      if (typeof value === 'string' && value.trim() === '') return '';
      if (!Number.isFinite(n)) {
        throw new ValueConversionError(
          field.key,
          `${field.hubspot} needs a number, got ${JSON.stringify(value)}`,
        );
      }
      return numberToWire(n);
    }
    case 'datetime': {
      const ms = typeof value === 'number' ? value : EPOCH_MS.test(value) ? Number(value) : Date.parse(value);
      if (!Number.isFinite(ms)) {
        throw new ValueConversionError(
          field.key,
          `${field.hubspot} needs a timestamp, got ${JSON.stringify(value)}`,
        );
      }
      return String(ms);
    }
    default:
      return String(value);
  }
}

/** Plain decimal notation: `String(1e21)` or `String(1e-7)` would send exponent notation. */
function numberToWire(n: number): string {
  const plain = String(n);
  if (!/e/i.test(plain)) return plain;
  return n.toLocaleString('en-US', { useGrouping: false, maximumFractionDigits: 20 });
}

/** HubSpot's wire string to a connector value: numbers as numbers, datetimes as ISO strings, "" as null. */
export function fromHubSpotValue(field: HubSpotField, raw: string | null | undefined): FieldValue {
  if (raw === null || raw === undefined || raw === '') return null;
  switch (field.kind) {
    case 'number': {
      const n = Number(raw);
      return Number.isFinite(n) ? n : null;
    }
    case 'datetime': {
      const date = EPOCH_MS.test(raw) ? new Date(Number(raw)) : new Date(raw);
      return Number.isNaN(date.getTime()) ? null : date.toISOString();
    }
    default:
      return raw;
  }
}
