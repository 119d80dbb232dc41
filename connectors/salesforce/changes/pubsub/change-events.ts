import avro from 'avsc';
import { z } from 'zod';

/**
 * Change Data Capture events as the Pub/Sub API delivers them: an Avro payload written with the schema named by
 * its `schema_id` (fetched once with GetSchema), holding a `ChangeEventHeader` and the record's fields. The
 * header's `changedFields`, `nulledFields` and `diffFields` arrive as bitmaps over the schema's field positions
 * ("Event Deserialization Considerations" of the Pub/Sub API guide): the first entry (`0x…`) marks top-level
 * fields, further entries (`<parent position>-0x…`) the fields inside a compound field such as an address.
 */

const headerSchema = z.object({
  entityName: z.string(),
  recordIds: z.array(z.string()).default([]),
  changeType: z.string(),
  changeOrigin: z.string().nullish(),
  transactionKey: z.string().nullish(),
  sequenceNumber: z.number().nullish(),
  commitTimestamp: z.number().nullish(),
  commitUser: z.string().nullish(),
  changedFields: z.array(z.string()).default([]),
  nulledFields: z.array(z.string()).default([]),
  diffFields: z.array(z.string()).default([]),
});

export interface ChangeEvent {
  entityName: string;
  recordIds: string[];
  /** CREATE, UPDATE, DELETE, UNDELETE, GAP_CREATE, GAP_UPDATE, GAP_DELETE, GAP_UNDELETE, GAP_OVERFLOW. */
  changeType: string;
  /**
   * `com/salesforce/api/<api>/<version>` for a change made through an API (and by Lightning Experience), with
   * `;client=<id>` when the call named a client in its call options; empty otherwise.
   */
  changeOrigin: string;
  commitUser: string | null;
  commitTimestamp: number | null;
  /** Field names, compound fields as `Parent.Child`. */
  changedFields: string[];
  /** The record's field values carried by the event (unchanged fields are null in an update). */
  values: Record<string, unknown>;
}

type RecordType = avro.types.RecordType;

/** The record type a field holds, looking through `["null", record]` unions. */
function recordTypeOf(type: avro.Type): RecordType | null {
  if (type.typeName === 'record') return type as RecordType;
  if (type.typeName === 'union:unwrapped' || type.typeName === 'union:wrapped') {
    for (const branch of (type as avro.types.UnwrappedUnionType).types) {
      if (branch.typeName === 'record') return branch as RecordType;
    }
  }
  return null;
}

/** The positions set in one bitmap (`0x…`, the lowest bit is position 0). */
export function bitmapPositions(hex: string): number[] {
  const value = BigInt(hex.startsWith('0x') ? hex : `0x${hex}`);
  const positions: number[] = [];
  for (let i = 0, rest = value; rest > 0n; i++, rest >>= 1n) if (rest & 1n) positions.push(i);
  return positions;
}

/** A header bitmap field expanded to field names against the event's schema. */
export function expandBitmapFields(schema: RecordType, entries: readonly string[]): string[] {
  const fields = schema.fields;
  const names: string[] = [];
  for (const entry of entries) {
    if (entry.startsWith('0x')) {
      for (const p of bitmapPositions(entry)) if (fields[p]) names.push(fields[p].name);
      continue;
    }
    const dash = entry.indexOf('-');
    if (dash < 0) {
      names.push(entry); // already a name (a CometD-style header)
      continue;
    }
    const parent = fields[Number(entry.slice(0, dash))];
    const child = parent ? recordTypeOf(parent.type) : null;
    if (!parent || !child) continue;
    for (const p of bitmapPositions(entry.slice(dash + 1))) {
      if (child.fields[p]) names.push(`${parent.name}.${child.fields[p].name}`);
    }
  }
  return names;
}

export class UnknownSchemaError extends Error {
  readonly code = 'CDC_SCHEMA_NOT_RECORD';
  constructor(readonly schemaId: string) {
    super(`the Pub/Sub schema ${schemaId} is not an Avro record`);
    this.name = 'UnknownSchemaError';
  }
}

/** Event schemas by id, each fetched once (GetSchema) and kept: a schema id names one schema for good. */
export class EventSchemas {
  private readonly types = new Map<string, Promise<RecordType>>();

  constructor(private readonly fetchSchema: (schemaId: string) => Promise<string>) {}

  get(schemaId: string): Promise<RecordType> {
    let type = this.types.get(schemaId);
    if (!type) {
      type = this.fetchSchema(schemaId).then((json) => {
        const parsed = avro.Type.forSchema(JSON.parse(json), { wrapUnions: false });
        if (parsed.typeName !== 'record') throw new UnknownSchemaError(schemaId);
        return parsed as RecordType;
      });
      // A failed fetch is not kept: the next event asks again.
      type.catch(() => this.types.delete(schemaId));
      this.types.set(schemaId, type);
    }
    return type;
  }

  async decode(schemaId: string, payload: Buffer): Promise<ChangeEvent> {
    const type = await this.get(schemaId);
    return decodeChangeEvent(type, payload);
  }
}

/** One payload decoded with its schema, the header's bitmaps expanded. */
export function decodeChangeEvent(type: RecordType, payload: Buffer): ChangeEvent {
  const record = type.fromBuffer(payload) as Record<string, unknown>;
  const header = headerSchema.parse(record.ChangeEventHeader);
  const { ChangeEventHeader: _header, ...values } = record;
  return {
    entityName: header.entityName,
    recordIds: header.recordIds,
    changeType: header.changeType,
    changeOrigin: header.changeOrigin ?? '',
    commitUser: header.commitUser ?? null,
    commitTimestamp: header.commitTimestamp ?? null,
    changedFields: expandBitmapFields(type, header.changedFields),
    values,
  };
}
