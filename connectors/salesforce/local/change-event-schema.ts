import avro from 'avsc';
import type { CustomFieldDef, LocalAccountChange, StoredAccount } from './org.js';

/**
 * The local org's `AccountChangeEvent` in Avro, shaped as Salesforce's: a `ChangeEventHeader` record first, then
 * the Account's fields, the addresses as compound records (`BillingAddress.City`), custom fields by API name. The
 * schema follows the org's custom fields, so a field created later gives a new schema (and schema id), as in
 * Salesforce. Header bitmaps (`changedFields`) are written as Salesforce writes them: `0x…` over the top-level
 * positions, `<position>-0x…` inside a compound field.
 */

const CHANGE_TYPES = [
  'CREATE',
  'UPDATE',
  'DELETE',
  'UNDELETE',
  'GAP_CREATE',
  'GAP_UPDATE',
  'GAP_DELETE',
  'GAP_UNDELETE',
  'GAP_OVERFLOW',
  'SNAPSHOT',
] as const;

export type LocalChangeType = (typeof CHANGE_TYPES)[number];

/** A published event's header as the Avro payload holds it (`changedFields` as bitmaps). */
export interface PublishedHeader {
  entityName: string;
  recordIds: string[];
  changeType: LocalChangeType;
  changeOrigin: string;
  commitUser: string;
  changedFields: string[];
}

const strings = { type: 'array', items: 'string' };
const HEADER = {
  type: 'record',
  name: 'ChangeEventHeader',
  namespace: 'com.sforce.eventbus',
  fields: [
    { name: 'entityName', type: 'string' },
    { name: 'recordIds', type: strings },
    { name: 'changeType', type: { type: 'enum', name: 'ChangeType', symbols: [...CHANGE_TYPES] } },
    { name: 'changeOrigin', type: 'string' },
    { name: 'transactionKey', type: 'string' },
    { name: 'sequenceNumber', type: 'int' },
    { name: 'commitTimestamp', type: 'long' },
    { name: 'commitNumber', type: 'long' },
    { name: 'commitUser', type: 'string' },
    { name: 'nulledFields', type: strings },
    { name: 'diffFields', type: strings },
    { name: 'changedFields', type: strings },
  ],
};

/** Account columns in the event, by the Account field they carry: [event field, compound child or null]. */
const STANDARD: Record<string, [string, string | null]> = {
  Name: ['Name', null],
  Website: ['Website', null],
  Industry: ['Industry', null],
  BillingCity: ['BillingAddress', 'City'],
  BillingCountry: ['BillingAddress', 'Country'],
  BillingCountryCode: ['BillingAddress', 'CountryCode'],
  ShippingCity: ['ShippingAddress', 'City'],
  ShippingCountry: ['ShippingAddress', 'Country'],
  ShippingCountryCode: ['ShippingAddress', 'CountryCode'],
  CreatedDate: ['CreatedDate', null],
  CreatedById: ['CreatedById', null],
  LastModifiedDate: ['LastModifiedDate', null],
  LastModifiedById: ['LastModifiedById', null],
};

const ADDRESS = {
  type: 'record',
  name: 'Address',
  namespace: 'com.sforce.eventbus',
  fields: ['City', 'Country', 'CountryCode'].map((name) => ({
    name,
    type: ['null', 'string'],
    default: null,
  })),
};

const optional = (type: unknown) => ({ type: ['null', type], default: null });

function customType(def: CustomFieldDef): string {
  if (def.type === 'Number') return 'double';
  if (def.type === 'DateTime') return 'long';
  return 'string';
}

/** The event schema for the org's custom fields now, with its id (an MD5 fingerprint, as a hex string). */
export class AccountEventSchema {
  readonly json: string;
  readonly id: string;
  private readonly type: avro.Type;
  private readonly positions: Map<string, number>;

  constructor(customFields: Iterable<CustomFieldDef>) {
    const custom = [...customFields].sort((a, b) => a.fullName.localeCompare(b.fullName));
    const fields: { name: string; type: unknown; default?: unknown }[] = [
      { name: 'ChangeEventHeader', type: HEADER },
      { name: 'Name', ...optional('string') },
      { name: 'Website', ...optional('string') },
      { name: 'Industry', ...optional('string') },
      { name: 'BillingAddress', ...optional(ADDRESS) },
      { name: 'ShippingAddress', ...optional('com.sforce.eventbus.Address') },
      { name: 'CreatedDate', ...optional('long') },
      { name: 'CreatedById', ...optional('string') },
      { name: 'LastModifiedDate', ...optional('long') },
      { name: 'LastModifiedById', ...optional('string') },
      ...custom.map((def) => ({
        name: def.fullName.replace(/^Account\./, ''),
        ...optional(customType(def)),
      })),
    ];
    const schema = { type: 'record', name: 'AccountChangeEvent', namespace: 'com.sforce.eventbus', fields };
    this.json = JSON.stringify(schema);
    this.type = avro.Type.forSchema(schema as avro.Schema, { wrapUnions: false });
    this.id = this.type.fingerprint('md5').toString('hex');
    this.positions = new Map(fields.map((f, i) => [f.name, i]));
  }

  /** The header's `changedFields` bitmaps for these Account field names. */
  bitmap(accountFields: readonly string[]): string[] {
    let top = 0n;
    const nested = new Map<number, bigint>();
    for (const name of accountFields) {
      const [field, child] = STANDARD[name] ?? [name, null];
      const position = this.positions.get(field);
      if (position === undefined) continue;
      if (child === null) top |= 1n << BigInt(position);
      else {
        const bit = 1n << BigInt(ADDRESS.fields.findIndex((f) => f.name === child));
        nested.set(position, (nested.get(position) ?? 0n) | bit);
      }
    }
    const hex = (v: bigint) => {
      const digits = v.toString(16).toUpperCase();
      return `0x${digits.length % 2 ? `0${digits}` : digits}`;
    };
    return [
      ...(top > 0n || nested.size > 0 ? [hex(top)] : []),
      ...[...nested].map(([p, v]) => `${p}-${hex(v)}`),
    ];
  }

  /** One event's Avro payload. `account`: the record's values now (none for a delete or a gap). */
  encode(input: {
    changeType: LocalChangeType;
    ids: string[];
    changed: string[];
    userId: string;
    origin: string;
    at: number;
    commitNumber: number;
    account: StoredAccount | null;
    /** An update carries its changed fields only, the rest null (Pub/Sub API delivery). */
    only?: LocalAccountChange['changed'];
  }): Buffer {
    const header = {
      entityName: 'Account',
      recordIds: input.ids,
      changeType: input.changeType,
      changeOrigin: input.origin,
      transactionKey: `local-${input.commitNumber}`,
      sequenceNumber: 1,
      commitTimestamp: input.at,
      commitNumber: input.commitNumber,
      commitUser: input.userId,
      nulledFields: [],
      diffFields: [],
      changedFields: this.bitmap(input.changed),
    };
    return this.type.toBuffer({ ChangeEventHeader: header, ...this.values(input.account, input.only) });
  }

  /** The header of a payload this schema encoded, read back as a subscriber would (for tests). */
  header(payload: Buffer): PublishedHeader {
    return (this.type.fromBuffer(payload) as { ChangeEventHeader: PublishedHeader }).ChangeEventHeader;
  }

  private values(account: StoredAccount | null, only?: readonly string[]): Record<string, unknown> {
    if (!account) return {};
    const keep = (name: string) => only === undefined || only.includes(name);
    const row = account as unknown as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const [name, [field, child]] of Object.entries(STANDARD)) {
      if (!keep(name) || row[name] === null || row[name] === undefined) continue;
      if (child === null) out[field] = row[name];
      else
        out[field] = {
          City: null,
          Country: null,
          CountryCode: null,
          ...(out[field] ?? {}),
          [child]: row[name],
        };
    }
    for (const [name, value] of Object.entries(account.custom)) {
      if (!keep(name) || value === null || !this.positions.has(name)) continue;
      out[name] = typeof value === 'boolean' ? String(value) : value;
    }
    return out;
  }
}
