import { HUBSPOT_MATCHING_PROPERTIES, HUBSPOT_MERGED_IDS_PROPERTY } from '../provider.js';
import type { InvalidProperty } from './error-bodies.js';
import { LocalHubSpotUsageError } from './usage-error.js';

/**
 * The stand-in's CRM data: company property definitions and groups, companies with every value change
 * recorded (who changed what, when), deletions and merges. Values are strings as in HubSpot; an empty
 * string clears a property.
 */

export type ChangeSource = 'seed' | 'api' | 'person' | 'merge';

export interface PropertyChange {
  property: string;
  value: string;
  previous: string;
  at: string;
  source: ChangeSource;
}

export interface LocalPropertyOption {
  label: string;
  value: string;
  displayOrder: number;
  hidden: boolean;
}

export interface LocalProperty {
  name: string;
  label: string;
  description: string;
  groupName: string;
  type: string;
  fieldType: string;
  displayOrder: number;
  formField: boolean;
  options: LocalPropertyOption[];
  hubspotDefined: boolean;
  readOnly: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface LocalGroup {
  name: string;
  label: string;
  displayOrder: number;
}

/** A company as stored; callers outside the store use `LocalCompanySnapshot`. */
export interface StoredCompany {
  id: string;
  values: Map<string, string>;
  createdAt: string;
  updatedAt: string;
  history: PropertyChange[];
  deleted: boolean;
  mergedInto?: string;
}

export interface LocalCompanySnapshot {
  id: string;
  properties: Record<string, string>;
  createdAt: string;
  updatedAt: string;
  history: PropertyChange[];
  deleted: boolean;
  mergedInto?: string;
}

export type SeedCompany = Record<string, string>;

const TYPES = new Set(['string', 'number', 'datetime', 'enumeration', 'bool', 'date']);

const SAMPLE = {
  names: [
    'Acme',
    'Globex',
    'Initech',
    'Umbrella',
    'Hooli',
    'Stark',
    'Wayne',
    'Tyrell',
    'Cyberdyne',
    'Soylent',
  ],
  industries: ['Software', 'Energy', 'Retail', 'Healthcare', 'Logistics'],
  places: [
    ['Germany', 'Berlin'],
    ['France', 'Lyon'],
    ['United States', 'Austin'],
    ['Japan', 'Osaka'],
    ['Brazil', 'Recife'],
  ],
} as const;

/** A note the connector created (alert activities), with the companies it is associated with. */
export interface LocalNote {
  id: string;
  body: string;
  timestamp: string;
  companyIds: string[];
}

export class LocalCompanyStore {
  readonly notes: LocalNote[] = [];
  readonly groups = new Map<string, LocalGroup>();
  readonly properties = new Map<string, LocalProperty>();
  private readonly companies = new Map<string, StoredCompany>();
  private nextId = 1_000_001;
  readonly writes = { batches: 0, records: 0, unchangedRecords: 0, propertyWrites: 0 };
  /** Records per batch update, in the order they came, since the last reset. */
  readonly batchSizes: number[] = [];

  addNote(input: Omit<LocalNote, 'id'>): LocalNote {
    const note = { id: String(9_000_000_001 + this.notes.length), ...input };
    this.notes.push(note);
    return { ...note };
  }

  notesFor(companyId: string): LocalNote[] {
    return this.notes.filter((n) => n.companyIds.includes(companyId)).map((n) => ({ ...n }));
  }

  constructor(private readonly now: () => number) {
    const at = this.iso();
    const builtin = (name: string, type: string, fieldType: string, readOnly = false): LocalProperty => ({
      name,
      label: name,
      description: '',
      groupName: 'companyinformation',
      type,
      fieldType,
      displayOrder: -1,
      formField: false,
      options: [],
      hubspotDefined: true,
      readOnly,
      createdAt: at,
      updatedAt: at,
    });
    this.groups.set('companyinformation', {
      name: 'companyinformation',
      label: 'Company information',
      displayOrder: 0,
    });
    for (const name of HUBSPOT_MATCHING_PROPERTIES)
      this.properties.set(name, builtin(name, 'string', 'text'));
    this.properties.set('hs_object_id', builtin('hs_object_id', 'number', 'number', true));
    this.properties.set('createdate', builtin('createdate', 'datetime', 'date', true));
    this.properties.set('hs_lastmodifieddate', builtin('hs_lastmodifieddate', 'datetime', 'date', true));
    this.properties.set(
      HUBSPOT_MERGED_IDS_PROPERTY,
      builtin(HUBSPOT_MERGED_IDS_PROPERTY, 'enumeration', 'checkbox', true),
    );
  }

  private iso(): string {
    return new Date(this.now()).toISOString();
  }

  // ---- properties -------------------------------------------------------------------------------------------

  createGroup(input: {
    name?: unknown;
    label?: unknown;
    displayOrder?: unknown;
  }): LocalGroup | 'exists' | string {
    if (typeof input.name !== 'string' || typeof input.label !== 'string')
      return 'a group needs a name and a label';
    if (this.groups.has(input.name)) return 'exists';
    const group = {
      name: input.name,
      label: input.label,
      displayOrder: typeof input.displayOrder === 'number' ? input.displayOrder : -1,
    };
    this.groups.set(group.name, group);
    return group;
  }

  createProperty(input: Record<string, unknown>): LocalProperty | 'exists' | string {
    const name = input.name;
    if (typeof name !== 'string' || !/^[a-z][a-z0-9_]*$/.test(name))
      return 'the property name is missing or not valid';
    if (this.properties.has(name)) return 'exists';
    const problem = this.checkDefinition(input);
    if (problem) return problem;
    const at = this.iso();
    const property: LocalProperty = {
      name,
      label: String(input.label),
      description: typeof input.description === 'string' ? input.description : '',
      groupName: String(input.groupName),
      type: String(input.type),
      fieldType: String(input.fieldType),
      displayOrder: typeof input.displayOrder === 'number' ? input.displayOrder : -1,
      formField: input.formField === true,
      options: normalizeOptions(input.options),
      hubspotDefined: false,
      readOnly: false,
      createdAt: at,
      updatedAt: at,
    };
    this.properties.set(name, property);
    return property;
  }

  private checkDefinition(input: Record<string, unknown>): string | null {
    if (typeof input.label !== 'string') return 'label is required';
    if (typeof input.type !== 'string' || !TYPES.has(input.type))
      return `type ${String(input.type)} is not valid`;
    if (typeof input.fieldType !== 'string') return 'fieldType is required';
    if (typeof input.groupName !== 'string' || !this.groups.has(input.groupName)) {
      return `property group ${String(input.groupName)} does not exist`;
    }
    if (input.type === 'enumeration' && normalizeOptions(input.options).length === 0) {
      return 'an enumeration property needs options';
    }
    return null;
  }

  /** PATCH semantics: the fields given replace the current ones; a type change must fit the stored values. */
  updateProperty(name: string, patch: Record<string, unknown>): LocalProperty | 'not_found' | string {
    const current = this.properties.get(name);
    if (!current) return 'not_found';
    if (current.hubspotDefined) return `${name} is defined by HubSpot and cannot be changed`;
    const next: LocalProperty = {
      ...current,
      label: typeof patch.label === 'string' ? patch.label : current.label,
      description: typeof patch.description === 'string' ? patch.description : current.description,
      groupName: typeof patch.groupName === 'string' ? patch.groupName : current.groupName,
      type: typeof patch.type === 'string' ? patch.type : current.type,
      fieldType: typeof patch.fieldType === 'string' ? patch.fieldType : current.fieldType,
      options: patch.options === undefined ? current.options : normalizeOptions(patch.options),
      updatedAt: this.iso(),
    };
    const problem = this.checkDefinition({ ...next });
    if (problem) return problem;
    if (next.type !== current.type) {
      for (const company of this.companies.values()) {
        const value = company.values.get(name);
        if (value !== undefined && typeof normalizeValue(next, value) !== 'string') {
          return `existing values of ${name} cannot be converted to ${next.type}`;
        }
      }
    }
    this.properties.set(name, next);
    return next;
  }

  // ---- companies --------------------------------------------------------------------------------------------

  create(values: SeedCompany, source: ChangeSource): LocalCompanySnapshot {
    const at = this.iso();
    const company: StoredCompany = {
      id: String(this.nextId++),
      values: new Map(),
      createdAt: at,
      updatedAt: at,
      history: [],
      deleted: false,
    };
    this.companies.set(company.id, company);
    for (const [k, v] of Object.entries(values)) this.set(company, k, v, source);
    return this.snapshot(company);
  }

  seed(input: number | readonly SeedCompany[]): LocalCompanySnapshot[] {
    const list =
      typeof input === 'number'
        ? Array.from({ length: input }, (_, i) => sampleCompany(this.nextId + i - 1_000_001))
        : input;
    return list.map((values) => this.create(values, 'seed'));
  }

  /** A live company, following merges to the survivor (HubSpot resolves merged-away ids the same way). */
  resolve(id: string): StoredCompany | undefined {
    let company = this.companies.get(id);
    for (let hops = 0; company?.mergedInto && hops < 10; hops++)
      company = this.companies.get(company.mergedInto);
    return company && !company.deleted && !company.mergedInto ? company : undefined;
  }

  /** Live companies in id order. */
  live(): StoredCompany[] {
    return [...this.companies.values()]
      .filter((c) => !c.deleted && !c.mergedInto)
      .sort((a, b) => Number(a.id) - Number(b.id));
  }

  snapshotOf(id: string): LocalCompanySnapshot | undefined {
    const company = this.companies.get(id);
    return company ? this.snapshot(company) : undefined;
  }

  private snapshot(company: StoredCompany): LocalCompanySnapshot {
    return {
      id: company.id,
      properties: Object.fromEntries(company.values),
      createdAt: company.createdAt,
      updatedAt: company.updatedAt,
      history: company.history.map((h) => ({ ...h })),
      deleted: company.deleted,
      ...(company.mergedInto ? { mergedInto: company.mergedInto } : {}),
    };
  }

  /** Checks and normalizes values for a write; problems are reported HubSpot's way. */
  validate(values: Record<string, unknown>): { normalized: Map<string, string>; invalid: InvalidProperty[] } {
    const normalized = new Map<string, string>();
    const invalid: InvalidProperty[] = [];
    for (const [name, raw] of Object.entries(values)) {
      const property = this.properties.get(name);
      if (!property) {
        invalid.push({ name, error: 'PROPERTY_DOESNT_EXIST', message: `Property "${name}" does not exist` });
        continue;
      }
      if (property.readOnly) {
        invalid.push({
          name,
          error: 'READ_ONLY_VALUE',
          message: `"${name}" is a read only property; its value cannot be set.`,
        });
        continue;
      }
      const result = normalizeValue(property, raw === null || raw === undefined ? '' : String(raw));
      if (typeof result === 'string') normalized.set(name, result);
      else invalid.push({ name, ...result });
    }
    return { normalized, invalid };
  }

  /** Applies normalized values; true when any value changed. */
  apply(company: StoredCompany, values: Map<string, string>, source: ChangeSource): boolean {
    let changed = false;
    for (const [name, value] of values) changed = this.set(company, name, value, source) || changed;
    if (changed) company.updatedAt = this.iso();
    return changed;
  }

  private set(company: StoredCompany, name: string, value: string, source: ChangeSource): boolean {
    const previous = company.values.get(name) ?? '';
    if (previous === value) return false;
    if (value === '') company.values.delete(name);
    else company.values.set(name, value);
    company.history.push({ property: name, value, previous, at: this.iso(), source });
    return true;
  }

  setByPerson(id: string, name: string, value: string): LocalCompanySnapshot {
    const company = this.resolve(id);
    if (!company) throw new LocalHubSpotUsageError(`company ${id} does not exist`);
    const { normalized, invalid } = this.validate({ [name]: value });
    if (invalid.length > 0) throw new LocalHubSpotUsageError(invalid.map((i) => i.message).join('; '));
    this.apply(company, normalized, 'person');
    return this.snapshot(company);
  }

  delete(id: string): void {
    const company = this.resolve(id);
    if (!company || company.id !== id) throw new LocalHubSpotUsageError(`company ${id} does not exist`);
    company.deleted = true;
    company.updatedAt = this.iso();
  }

  /** Brings a deleted company back from the recycling bin (HubSpot's `restore`). */
  restore(id: string): LocalCompanySnapshot {
    const company = this.companies.get(id);
    if (!company?.deleted) throw new LocalHubSpotUsageError(`company ${id} is not deleted`);
    company.deleted = false;
    company.updatedAt = this.iso();
    return this.snapshot(company);
  }

  /** Properties the portal's rules require that would be empty after `values` are applied. */
  missingRequired(
    company: StoredCompany,
    values: Map<string, string>,
    required: ReadonlySet<string>,
  ): InvalidProperty[] {
    const missing: InvalidProperty[] = [];
    for (const name of required) {
      const after = values.has(name) ? values.get(name) : company.values.get(name);
      if (!after) missing.push({ name, error: 'REQUIRED_PROPERTY', message: `${name} is required` });
    }
    return missing;
  }

  /** `mergedId` disappears into `primaryId`; the primary keeps its values and gains the ones it lacked. */
  merge(primaryId: string, mergedId: string): { moved: number } {
    const primary = this.resolve(primaryId);
    const merged = this.resolve(mergedId);
    if (!primary || primary.id !== primaryId)
      throw new LocalHubSpotUsageError(`company ${primaryId} does not exist`);
    if (!merged || merged.id !== mergedId)
      throw new LocalHubSpotUsageError(`company ${mergedId} does not exist`);
    let moved = 0;
    for (const [name, value] of merged.values) {
      if (!primary.values.has(name)) moved += this.set(primary, name, value, 'merge') ? 1 : 0;
    }
    const ids = (primary.values.get(HUBSPOT_MERGED_IDS_PROPERTY) ?? '').split(';').filter(Boolean);
    this.set(primary, HUBSPOT_MERGED_IDS_PROPERTY, [...ids, mergedId].join(';'), 'merge');
    merged.mergedInto = primary.id;
    merged.updatedAt = this.iso();
    primary.updatedAt = this.iso();
    return { moved };
  }

  /** The object as HubSpot's CRM API returns it, with the requested properties (null when empty). */
  toObject(company: StoredCompany, requested: readonly string[]): Record<string, unknown> {
    const properties: Record<string, string | null> = {
      hs_object_id: company.id,
      createdate: company.createdAt,
      hs_lastmodifieddate: company.updatedAt,
    };
    for (const name of requested) properties[name] = company.values.get(name) ?? null;
    const mergedIds = company.values.get(HUBSPOT_MERGED_IDS_PROPERTY);
    if (mergedIds) properties[HUBSPOT_MERGED_IDS_PROPERTY] = mergedIds;
    return {
      id: company.id,
      properties,
      createdAt: company.createdAt,
      updatedAt: company.updatedAt,
      archived: false,
    };
  }

  valueOf(company: StoredCompany, name: string): string {
    return company.values.get(name) ?? '';
  }
}

function normalizeOptions(raw: unknown): LocalPropertyOption[] {
  if (!Array.isArray(raw)) return [];
  return raw
    .filter(
      (o): o is Record<string, unknown> => typeof o === 'object' && o !== null && typeof o.value === 'string',
    )
    .map((o, i) => ({
      label: typeof o.label === 'string' ? o.label : String(o.value),
      value: String(o.value),
      displayOrder: typeof o.displayOrder === 'number' ? o.displayOrder : i,
      hidden: o.hidden === true,
    }));
}

const EPOCH_MS = /^-?\d+$/;

function normalizeValue(property: LocalProperty, value: string): string | { error: string; message: string } {
  if (value === '') return '';
  switch (property.type) {
    case 'number': {
      const n = Number(value.trim());
      return value.trim() !== '' && Number.isFinite(n)
        ? value.trim()
        : { error: 'INVALID_FLOAT', message: `${JSON.stringify(value)} is not a valid number` };
    }
    case 'datetime': {
      const ms = EPOCH_MS.test(value) ? Number(value) : Date.parse(value);
      return Number.isFinite(ms)
        ? new Date(ms).toISOString()
        : { error: 'INVALID_DATETIME', message: `${JSON.stringify(value)} is not a valid datetime` };
    }
    case 'enumeration':
      return property.options.some((o) => o.value === value)
        ? value
        : {
            error: 'INVALID_OPTION',
            message: `${JSON.stringify(value)} was not one of the allowed options: [${property.options.map((o) => o.value).join(', ')}]`,
          };
    default:
      return value;
  }
}

function sampleCompany(n: number): SeedCompany {
  const name = `${SAMPLE.names[n % SAMPLE.names.length]} ${Math.floor(n / SAMPLE.names.length) + 1}`;
  const [country, city] = SAMPLE.places[n % SAMPLE.places.length]!;
  return {
    name,
    domain: `${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}.example`,
    industry: SAMPLE.industries[n % SAMPLE.industries.length]!,
    country,
    city,
  };
}
