import { z } from 'zod';
import type {
  ApiUsage,
  CompanyRecord,
  CrmConnector,
  CrmEnvironment,
  EnsureFieldsResult,
  Page,
  ProviderLimits,
  RecordActivity,
  RecordUpdate,
  WriteResult,
} from '../../src/crm/connector.js';
import { CrmBadRequestError, CrmFieldsMissingError, CrmTransientError } from '../../src/crm/errors.js';
import type { HubSpotHttp } from './api/api-client.js';
import {
  accountDetailsRequest,
  type BatchUpdateInput,
  batchReadRequest,
  batchUpdateRequest,
  createNoteRequest,
  listCompaniesRequest,
  nameSearchWords,
  noteCompanyLabelsRequest,
  searchByNameRequest,
  searchBySlugRequest,
} from './api/endpoints.js';
import {
  accountDetailsSchema,
  associationLabelsSchema,
  batchResponseSchema,
  type HubSpotErrorBody,
  objectPageSchema,
  parseHubSpotError,
  searchPageSchema,
} from './api/wire.js';
import { ensureHubSpotFields } from './fields/ensure-fields.js';
import { hubspotField } from './fields/field-names.js';
import {
  HUBSPOT_ERROR_CATEGORIES,
  HUBSPOT_KIND,
  HUBSPOT_LIMITS,
  HUBSPOT_PROVIDER,
  HUBSPOT_SIZES,
  isHubSpotTestAccount,
} from './provider.js';
import {
  companyReadProperties,
  mapBatchUpdate,
  prepareUpdate,
  recordErrorFrom,
  toCompanyRecord,
} from './records/records.js';
import { HUBSPOT_RETRY_BUDGET } from './retry-budget.js';

/**
 * The CrmConnector for one HubSpot portal. Reads page through the list endpoint and the batch read (never the
 * search endpoint, which stops at 10,000 results); writes go through the batch update, 100 at a time.
 */
export class HubSpotConnector implements CrmConnector {
  readonly kind = HUBSPOT_KIND;
  readonly limits: ProviderLimits = HUBSPOT_LIMITS;
  private readonly properties = companyReadProperties();

  private noteTypeId: Promise<number> | null = null;

  constructor(private readonly http: HubSpotHttp) {}

  async listCompanies(cursor: string | null): Promise<Page<CompanyRecord>> {
    const res = await this.http.request(listCompaniesRequest(this.http.paths, this.properties, cursor));
    const page = parseOrThrow(objectPageSchema, res.body, 'company page');
    return { records: page.results.map(toCompanyRecord), nextCursor: page.paging?.next?.after ?? null };
  }

  async readCompanies(ids: string[]): Promise<CompanyRecord[]> {
    const unique = [...new Set(ids)];
    const found = new Map<string, CompanyRecord>();
    for (const chunk of chunks(unique, HUBSPOT_SIZES.batchRead)) {
      const res = await this.http.request(batchReadRequest(this.http.paths, this.properties, chunk));
      if (res.status === 404) continue;
      const batch = parseOrThrow(batchResponseSchema, res.body, 'batch read');
      const asked = new Set(chunk);
      // A merged-away id may come back as its survivor: only the records asked for are answered.
      for (const object of batch.results)
        if (asked.has(object.id)) found.set(object.id, toCompanyRecord(object));
    }
    return unique.filter((id) => found.has(id)).map((id) => found.get(id)!);
  }

  async writeCompanies(updates: RecordUpdate[]): Promise<WriteResult[]> {
    const out: (WriteResult | undefined)[] = new Array(updates.length);
    // HubSpot refuses a batch that names one id twice: later values win, both updates share the outcome.
    const byId = new Map<string, { properties: Record<string, string>; indices: number[] }>();
    updates.forEach((update, index) => {
      const prepared = prepareUpdate(update);
      if ('error' in prepared) {
        out[index] = { id: update.id, ok: false, error: prepared.error };
        return;
      }
      const entry = byId.get(update.id);
      if (entry) {
        Object.assign(entry.properties, prepared.properties);
        entry.indices.push(index);
      } else {
        byId.set(update.id, { properties: prepared.properties, indices: [index] });
      }
    });

    const toSend: BatchUpdateInput[] = [];
    for (const [id, entry] of byId) {
      if (Object.keys(entry.properties).length === 0) {
        for (const i of entry.indices) out[i] = { id, ok: true };
      } else {
        toSend.push({ id, properties: entry.properties });
      }
    }

    for (const chunk of chunks(toSend, HUBSPOT_SIZES.batchUpdate)) {
      const results = await this.updateBatch(chunk);
      for (const { id } of chunk) {
        const result = results.get(id)!;
        for (const i of byId.get(id)!.indices) out[i] = result;
      }
    }
    return out.map(
      (r, i) => r ?? { id: updates[i]!.id, ok: false, error: { code: 'UNKNOWN', message: 'not sent' } },
    );
  }

  ensureFields(): Promise<EnsureFieldsResult> {
    return ensureHubSpotFields(this.http);
  }

  async findBySlug(slug: string): Promise<CompanyRecord[]> {
    const records: CompanyRecord[] = [];
    let after: string | undefined;
    do {
      const res = await this.http.request(
        searchBySlugRequest(this.http.paths, hubspotField('slug').hubspot, slug, this.properties, after),
      );
      const page = parseOrThrow(searchPageSchema, res.body, 'search page');
      records.push(...page.results.map(toCompanyRecord));
      after = page.paging?.next?.after;
    } while (after && records.length < HUBSPOT_SIZES.searchMaxResults);
    return records;
  }

  /** One search page at most: the admin's search is bounded, and a name with no word in it finds nothing. */
  async findByName(query: string, limit: number): Promise<CompanyRecord[]> {
    const words = nameSearchWords(query);
    if (words.length === 0 || limit <= 0) return [];
    const res = await this.http.request(searchByNameRequest(this.http.paths, words, this.properties, limit));
    return parseOrThrow(searchPageSchema, res.body, 'search page')
      .results.map(toCompanyRecord)
      .slice(0, limit);
  }

  async environment(): Promise<CrmEnvironment> {
    const res = await this.http.request(accountDetailsRequest(this.http.paths));
    const parsed = accountDetailsSchema.safeParse(res.body);
    return parsed.success && isHubSpotTestAccount(parsed.data.accountType) ? 'test' : 'production';
  }

  apiUsage(): ApiUsage | null {
    return this.http.apiUsage();
  }

  /** An alert as a note on the company's timeline (needs the optional note scope, HUBSPOT_NOTE_SCOPES). */
  async createActivity(recordId: string, activity: RecordActivity): Promise<void> {
    const typeId = await this.noteAssociationType();
    await this.http.request(createNoteRequest(this.http.paths, recordId, activity, typeId));
  }

  /**
   * The portal's HubSpot-defined, unlabeled note -> company association type, read from its labels API once per
   * connector (that is, per portal and process); a failed read is asked again next time.
   */
  private noteAssociationType(): Promise<number> {
    this.noteTypeId ??= this.http.request(noteCompanyLabelsRequest(this.http.paths)).then(
      (res) => {
        const parsed = associationLabelsSchema.safeParse(res.body);
        const defined = parsed.success
          ? parsed.data.results.filter((r) => r.category === 'HUBSPOT_DEFINED')
          : [];
        const plain = defined.find((r) => !r.label) ?? defined[0];
        if (!plain) {
          throw new CrmBadRequestError(
            'HubSpot lists no HubSpot-defined note-to-company association type for this portal',
            'hubspot',
          );
        }
        return plain.typeId;
      },
      (err: unknown) => {
        this.noteTypeId = null;
        throw err;
      },
    );
    return this.noteTypeId;
  }

  /**
   * One batch update. 200/207 map per record. A whole-batch 400/404 that names missing ids marks those
   * NOT_FOUND and sends the rest again; one naming missing properties is CrmFieldsMissingError. A whole-batch
   * validation refusal (from 2026-09 on HubSpot applies the portal's rules, required properties among them, to
   * every write) is narrowed down to the records it is about: the ids it names, or else by halving the batch,
   * so one record that breaks a portal rule fails alone and the others are written. Any other whole-batch
   * refusal is given to every record in it.
   */
  private async updateBatch(batch: BatchUpdateInput[]): Promise<Map<string, WriteResult>> {
    const results = new Map<string, WriteResult>();
    let pending = batch;
    for (
      let attempt = 0;
      attempt < HUBSPOT_RETRY_BUDGET.batchUpdate.budget.attempts && pending.length > 0;
      attempt++
    ) {
      const res = await this.http.request(batchUpdateRequest(this.http.paths, pending));
      if (res.status < 300) {
        const mapped = mapBatchUpdate(
          pending.map((p) => p.id),
          parseOrThrow(batchResponseSchema, res.body, 'batch update'),
        );
        for (const [id, result] of mapped) results.set(id, result);
        return results;
      }
      const error = parseHubSpotError(res.body);
      const namedIds = new Set(idsNamedIn(error));
      if (error.category === HUBSPOT_ERROR_CATEGORIES.objectNotFound && namedIds.size > 0) {
        for (const p of pending) {
          if (namedIds.has(p.id)) results.set(p.id, { id: p.id, ok: false, error: recordErrorFrom(error) });
        }
        pending = pending.filter((p) => !namedIds.has(p.id));
        continue;
      }
      const missingProperties = missingPropertiesIn(error);
      if (missingProperties.length > 0) {
        throw new CrmFieldsMissingError(
          `HubSpot has no company property ${missingProperties.join(', ')}: run the field setup again`,
          HUBSPOT_PROVIDER,
          missingProperties,
        );
      }
      if (res.status === 400 && error.category === HUBSPOT_ERROR_CATEGORIES.validation) {
        const named = pending.filter((p) => namedIds.has(p.id));
        if (named.length > 0 && named.length < pending.length) {
          for (const p of named) results.set(p.id, { id: p.id, ok: false, error: recordErrorFrom(error) });
          pending = pending.filter((p) => !namedIds.has(p.id));
          continue;
        }
        if (named.length === 0 && pending.length > 1) {
          const half = Math.ceil(pending.length / 2);
          for (const part of [pending.slice(0, half), pending.slice(half)]) {
            for (const [id, result] of await this.updateBatch(part)) results.set(id, result);
          }
          return results;
        }
      }
      for (const p of pending) results.set(p.id, { id: p.id, ok: false, error: recordErrorFrom(error) });
      return results;
    }
    for (const p of pending) {
      results.set(p.id, {
        id: p.id,
        ok: false,
        error: { code: 'RETRYABLE', message: 'HubSpot kept refusing the batch this record was in' },
      });
    }
    return results;
  }
}

/** Record ids a whole-call error names, in `context.ids` or in its sub-errors' contexts. */
function idsNamedIn(error: HubSpotErrorBody): string[] {
  const ids = [...(error.context?.ids ?? [])];
  for (const sub of error.errors ?? []) ids.push(...(sub.context?.ids ?? []));
  return ids;
}

const invalidPropertiesSchema = z.array(
  z.looseObject({ name: z.string().optional(), error: z.string().optional() }),
);

/** HubSpot lists invalid properties as JSON inside the message: "Property values were not valid: [...]". */
function missingPropertiesIn(error: HubSpotErrorBody): string[] {
  const message = error.message ?? '';
  if (!message.includes('PROPERTY_DOESNT_EXIST')) return [];
  const start = message.indexOf('[');
  if (start >= 0) {
    try {
      const parsed = invalidPropertiesSchema.safeParse(JSON.parse(message.slice(start)));
      if (parsed.success) {
        const names = parsed.data
          .filter((p) => p.error === 'PROPERTY_DOESNT_EXIST' && p.name)
          .map((p) => p.name!);
        if (names.length > 0) return [...new Set(names)];
      }
    } catch {
      // Not JSON after all: fall through to the pattern below.
    }
  }
  return [...new Set([...message.matchAll(/Property \\?"([^"\\]+)\\?" does not exist/g)].map((m) => m[1]!))];
}

function parseOrThrow<T>(schema: z.ZodType<T>, body: unknown, what: string): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    throw new CrmTransientError(
      `HubSpot's ${what} did not have the expected shape: ${parsed.error.issues[0]?.message ?? 'unknown'}`,
      HUBSPOT_PROVIDER,
    );
  }
  return parsed.data;
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
