import { z } from 'zod';
import type { ChangedRecord, CompanyRecord } from '../../../src/crm/connector.js';
import type { FieldKey, FieldValue, FieldValues } from '../../../src/fields.js';
import { SALESFORCE_FIELDS, type SalesforceField } from '../fields/field-names.js';
import { salesforceShape } from '../fields/field-types.js';
import { ACCOUNT_CHANGE_FIELDS, ACCOUNT_STANDARD_FIELDS } from '../provider.js';

/** Salesforce Url fields hold 255 characters. */
const URL_FIELD_LENGTH = 255;

/**
 * Account rows as SOQL returns them, and the conversions between Salesforce values and the connector's
 * FieldValues. Salesforce returns date-times as `2024-05-01T12:00:00.000+0000`; the connector works in ISO 8601
 * UTC (`...Z`), so both directions normalise here.
 */

const nullableString = z
  .string()
  .nullish()
  .transform((v) => v ?? null);
const fieldValue = z.union([z.string(), z.number(), z.boolean()]).nullish();

export const accountRowSchema = z
  .object({
    Id: z.string(),
    Name: nullableString,
    Website: nullableString,
    Industry: nullableString,
    BillingCountry: nullableString,
    BillingCity: nullableString,
    ShippingCountry: nullableString,
    ShippingCity: nullableString,
    // Only in an org with State and Country/Territory Picklists on (and selected only then).
    BillingCountryCode: nullableString.optional(),
    ShippingCountryCode: nullableString.optional(),
  })
  .catchall(z.unknown());
export type AccountRow = z.infer<typeof accountRowSchema>;

export const changedAccountRowSchema = accountRowSchema.extend({
  CreatedDate: z.string(),
  SystemModstamp: z.string(),
  IsDeleted: z.boolean().default(false),
  MasterRecordId: z.string().nullish(),
  LastModifiedById: z.string().nullish(),
});

/** The ISO code fields an org has when State and Country/Territory Picklists are on. */
export const ACCOUNT_COUNTRY_CODE_FIELDS = ['BillingCountryCode', 'ShippingCountryCode'] as const;

export function accountSelectFields(options: { changes?: boolean; countryCodes?: boolean } = {}): string[] {
  return [
    ...ACCOUNT_STANDARD_FIELDS,
    ...(options.countryCodes ? ACCOUNT_COUNTRY_CODE_FIELDS : []),
    ...(options.changes ? ACCOUNT_CHANGE_FIELDS : []),
    ...SALESFORCE_FIELDS.map((f) => f.salesforce),
  ];
}

/** Any Salesforce date-time spelling to ISO 8601 UTC with milliseconds; null when it does not parse. */
export function normalizeDateTime(value: string): string | null {
  // `+0000` (no colon) is what the REST API sends; Date.parse wants `+00:00`.
  const withColon = value.replace(/([+-]\d{2})(\d{2})$/, '$1:$2');
  const ms = Date.parse(withColon);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

function fromSalesforce(field: SalesforceField, raw: unknown): FieldValue {
  const parsed = fieldValue.safeParse(raw);
  if (!parsed.success || parsed.data === null || parsed.data === undefined) return null;
  const v = parsed.data;
  switch (field.kind) {
    case 'number':
      return typeof v === 'number' ? v : Number.isFinite(Number(v)) ? Number(v) : null;
    case 'datetime':
      return typeof v === 'string' ? normalizeDateTime(v) : null;
    default:
      return typeof v === 'string' ? (v === '' ? null : v) : String(v);
  }
}

/** `https://www.Example.com/about` -> `example.com`; null when there is no usable host. */
export function websiteToDomain(website: string | null): string | null {
  if (!website) return null;
  const trimmed = website.trim();
  if (trimmed === '') return null;
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `http://${trimmed}`;
  try {
    const host = new URL(withScheme).hostname.toLowerCase().replace(/\.$/, '');
    if (!host.includes('.')) return null;
    return host.startsWith('www.') ? host.slice(4) : host;
  } catch {
    return null;
  }
}

function blank(value: string | null): boolean {
  return value === null || value.trim() === '';
}

/**
 * The Billing address's country and city, or the Shipping address's when Billing is empty. With State and
 * Country/Territory Picklists on, the country comes from the ISO code (`BillingCountryCode`): the picklist's
 * label is whatever the org renamed it to, the code is what every org agrees on. It is handed on as the
 * country's English name, because a bare code can read as a US state to matching ("GA", "PA").
 */
export function addressOf(row: AccountRow): { country: string | null; city: string | null } {
  const billing = countryOf(row.BillingCountryCode, row.BillingCountry);
  const billingEmpty = billing === null && blank(row.BillingCity);
  return billingEmpty
    ? { country: countryOf(row.ShippingCountryCode, row.ShippingCountry), city: row.ShippingCity }
    : { country: billing, city: row.BillingCity };
}

const REGION_NAMES = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });

function countryOf(code: string | null | undefined, name: string | null): string | null {
  const iso = code?.trim().toUpperCase();
  if (iso && /^[A-Z]{2}$/.test(iso)) return REGION_NAMES.of(iso) ?? iso;
  return blank(name) ? null : name;
}

export function toCompanyRecord(row: AccountRow): CompanyRecord {
  const fields: Partial<FieldValues> = {};
  for (const field of SALESFORCE_FIELDS) fields[field.key] = fromSalesforce(field, row[field.salesforce]);
  return {
    id: row.Id,
    name: row.Name,
    domain: websiteToDomain(row.Website),
    industry: row.Industry,
    // One address, not a mix: the Shipping address only when Billing names no country and no city.
    ...addressOf(row),
    fields,
  };
}

export function toChangedRecord(row: z.infer<typeof changedAccountRowSchema>): ChangedRecord {
  return {
    ...toCompanyRecord(row),
    createdAt: normalizeDateTime(row.CreatedDate) ?? row.CreatedDate,
    modifiedAt: normalizeDateTime(row.SystemModstamp) ?? row.SystemModstamp,
    modifiedBy: row.LastModifiedById ?? null,
  };
}

export class FieldValueError extends Error {
  readonly code = 'FIELD_VALUE_INVALID';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'FieldValueError';
  }
}

const FIELD_BY_KEY = new Map<FieldKey, SalesforceField>(SALESFORCE_FIELDS.map((f) => [f.key, f]));

/**
 * The wire value for one field: numbers as received, date-times as ISO 8601, `null` clears. Throws
 * FieldValueError for a value the field cannot hold, so the record fails alone without a call.
 */
export function toSalesforceValue(
  key: FieldKey,
  value: FieldValue,
): { name: string; value: string | number | null } {
  const field = FIELD_BY_KEY.get(key);
  if (!field) throw new FieldValueError(String(key), `unknown field ${String(key)}`);
  const name = field.salesforce;
  if (value === null) return { name, value: null };
  switch (field.kind) {
    case 'number': {
      const n = typeof value === 'number' ? value : Number(value);
      if (typeof value === 'string' && value.trim() === '')
        throw new FieldValueError(name, `${name}: empty number`);
      if (!Number.isFinite(n))
        throw new FieldValueError(name, `${name}: ${JSON.stringify(value)} is not a number`);
      return { name, value: typeof value === 'number' ? value : n };
    }
    case 'datetime': {
      const iso = normalizeDateTime(String(value));
      if (!iso) throw new FieldValueError(name, `${name}: ${JSON.stringify(value)} is not a date-time`);
      return { name, value: iso };
    }
    default: {
      const text = String(value);
      const max = salesforceShape(field).length ?? (field.kind === 'url' ? URL_FIELD_LENGTH : undefined);
      if (max !== undefined && text.length > max) {
        throw new FieldValueError(name, `${name}: ${text.length} characters, the field holds ${max}`);
      }
      return { name, value: text };
    }
  }
}

/** The Salesforce body for one update (without `attributes`/`id`). */
export function toSalesforceFields(
  values: Partial<Record<FieldKey, FieldValue>>,
): Record<string, string | number | null> {
  const out: Record<string, string | number | null> = {};
  for (const [key, value] of Object.entries(values) as [FieldKey, FieldValue | undefined][]) {
    if (value === undefined) continue;
    const wire = toSalesforceValue(key, value);
    out[wire.name] = wire.value;
  }
  return out;
}
