import type {
  CompanyRecord,
  RecordError,
  RecordErrorCode,
  RecordUpdate,
  WriteResult,
} from '../../../src/crm/connector.js';
import type { FieldKey, FieldValue } from '../../../src/fields.js';
import type { HubSpotBatchResponse, HubSpotErrorBody, HubSpotObject } from '../api/wire.js';
import { ValueConversionError } from '../errors.js';
import { HUBSPOT_FIELDS, hubspotField } from '../fields/field-names.js';
import { fromHubSpotValue, hubspotOwnPropertyNames, toHubSpotValue } from '../fields/field-types.js';
import {
  HUBSPOT_ERROR_CATEGORIES,
  HUBSPOT_MATCHING_PROPERTIES,
  HUBSPOT_MERGED_IDS_PROPERTY,
} from '../provider.js';

/**
 * Mapping between HubSpot objects and the connector's records: what is read, what is written, and how a batch
 * update's answer (200, or 207 with per-record errors) becomes one WriteResult per update.
 */

/** Properties requested on every read: the matching fields and the connector's own. */
export function companyReadProperties(): string[] {
  return [...HUBSPOT_MATCHING_PROPERTIES, ...hubspotOwnPropertyNames()];
}

export function toCompanyRecord(object: HubSpotObject): CompanyRecord {
  const p = object.properties;
  const text = (name: string): string | null => {
    const v = p[name];
    return v === undefined || v === null || v === '' ? null : v;
  };
  const fields: Partial<Record<FieldKey, FieldValue>> = {};
  for (const field of HUBSPOT_FIELDS) fields[field.key] = fromHubSpotValue(field, p[field.hubspot]);
  return {
    id: object.id,
    name: text('name'),
    domain: text('domain'),
    industry: text('industry'),
    country: text('country'),
    city: text('city'),
    fields,
  };
}

export type PreparedUpdate =
  | { id: string; properties: Record<string, string> }
  | { id: string; error: RecordError };

/** Converts one update to HubSpot properties, or explains why it cannot be sent. */
export function prepareUpdate(update: RecordUpdate): PreparedUpdate {
  const properties: Record<string, string> = {};
  try {
    for (const [key, value] of Object.entries(update.values) as [FieldKey, FieldValue | undefined][]) {
      if (value === undefined) continue;
      const field = hubspotField(key);
      properties[field.hubspot] = toHubSpotValue(field, value);
    }
  } catch (err) {
    if (err instanceof ValueConversionError) {
      return { id: update.id, error: { code: 'INVALID_VALUE', message: err.message } };
    }
    throw err;
  }
  return { id: update.id, properties };
}

/** Maps a HubSpot error (207 entry or whole-call body) to a per-record error. */
export function recordErrorFrom(error: HubSpotErrorBody): RecordError {
  const category = error.category ?? error.status ?? 'UNKNOWN';
  const message = error.message ?? 'HubSpot rejected this record';
  const code = recordErrorCode(category, message);
  return { code, message, providerCode: category };
}

function recordErrorCode(category: string, message: string): RecordErrorCode {
  if (category === HUBSPOT_ERROR_CATEGORIES.objectNotFound) return 'NOT_FOUND';
  if (category === HUBSPOT_ERROR_CATEGORIES.validation) {
    return /READ_ONLY|PROPERTY_DOESNT_EXIST|does not exist/i.test(message)
      ? 'FIELD_NOT_WRITABLE'
      : 'INVALID_VALUE';
  }
  if (['RATE_LIMITS', 'TIMEOUT', 'INTERNAL_ERROR', 'LOCKED'].includes(category)) return 'RETRYABLE';
  return 'UNKNOWN';
}

/**
 * One result per input id. A record is ok when a result carries its id; failed when an error lists it in
 * `context.ids`. An id that HubSpot resolved to another record (it was merged away) comes back under the
 * survivor's id: the survivor's `hs_merged_object_ids` names it, or it is the only unmatched pair.
 */
export function mapBatchUpdate(
  inputIds: readonly string[],
  response: HubSpotBatchResponse,
): Map<string, WriteResult> {
  const out = new Map<string, WriteResult>();
  const results = new Map(response.results.map((r) => [r.id, r]));
  const errors = new Map<string, RecordError>();
  const unattributed: RecordError[] = [];
  for (const error of response.errors) {
    const ids = error.context?.ids ?? [];
    if (ids.length === 0) unattributed.push(recordErrorFrom(error));
    for (const id of ids) errors.set(id, recordErrorFrom(error));
  }

  const inputs = new Set(inputIds);
  const unmatched: string[] = [];
  for (const id of inputIds) {
    if (results.has(id)) out.set(id, { id, ok: true });
    else if (errors.has(id)) out.set(id, { id, ok: false, error: errors.get(id)! });
    else unmatched.push(id);
  }

  const strangers = response.results.filter((r) => !inputs.has(r.id));
  const claimed = new Set<string>();
  const stillUnmatched: string[] = [];
  for (const id of unmatched) {
    const survivor = strangers.find((r) => mergedIdsOf(r).includes(id));
    if (survivor) {
      claimed.add(survivor.id);
      out.set(id, { id, ok: false, error: mergedError(id, survivor.id) });
    } else {
      stillUnmatched.push(id);
    }
  }
  const unclaimed = strangers.filter((r) => !claimed.has(r.id));
  if (stillUnmatched.length === 1 && unclaimed.length === 1) {
    const id = stillUnmatched[0]!;
    out.set(id, { id, ok: false, error: mergedError(id, unclaimed[0]!.id) });
  } else {
    for (const id of stillUnmatched) {
      const error: RecordError =
        unattributed.length === 1
          ? unattributed[0]!
          : { code: 'UNKNOWN', message: 'HubSpot returned neither a result nor an error for this record' };
      out.set(id, { id, ok: false, error });
    }
  }
  return out;
}

function mergedIdsOf(object: HubSpotObject): string[] {
  const raw = object.properties[HUBSPOT_MERGED_IDS_PROPERTY];
  return raw ? raw.split(';').map((s) => s.trim()) : [];
}

function mergedError(id: string, survivor: string): RecordError {
  return {
    code: 'NOT_FOUND',
    message: `company ${id} was merged into ${survivor}`,
    providerCode: 'MERGED',
    mergedInto: survivor,
  };
}
