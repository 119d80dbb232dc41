import { z } from 'zod';
import { LINK_SOURCES, type LinkSource } from '../fields.js';
import { execOrThrow, type RedisClient } from '../redis.js';
import { chunk } from '../util/chunk.js';
import type { Keys } from './keys.js';

/**
 * What the preview of a run's undo read of each record in the CRM, kept for that preview's confirmation: a
 * confirmation whose set still has the digest the preview showed plans from this read instead of reading every
 * record of the run again. Kept for minutes only: a confirmation page is answered soon or shown again. What a
 * record holds when the unlink is written is checked there anyway (the batch reads the record under its lock
 * and leaves it alone when its slug is no longer the one this read saw).
 */
export const UNDO_READ_SECONDS = 15 * 60;

/** Fields per HSET and HMGET: one round trip of bounded size. */
const FIELDS_PER_CALL = 500;

/** A record as the preview read it: its slug, who made the link, its name; null when the CRM no longer has it. */
export type SeenRecord = { slug: string | null; source: LinkSource | null; name: string | null } | null;

const seenRecordSchema = z.union([
  z.object({
    slug: z.string().nullable(),
    source: z.enum(LINK_SOURCES).nullable(),
    name: z.string().nullable(),
  }),
  z.null(),
]);

export class UndoReads {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  /** Keeps a preview's read under its digest (replacing one kept under the same digest). */
  async save(installationId: string, confirm: string, seen: ReadonlyMap<string, SeenRecord>): Promise<void> {
    const key = this.keys.undoRead(installationId, confirm);
    const batch = this.redis.multi().del(key);
    for (const part of chunk([...seen], FIELDS_PER_CALL)) {
      batch.hset(key, ...part.flatMap(([id, record]) => [id, JSON.stringify(record)]));
    }
    await execOrThrow(batch.expire(key, UNDO_READ_SECONDS));
  }

  /** Whether a read is kept under that digest. */
  async has(installationId: string, confirm: string): Promise<boolean> {
    return (await this.redis.exists(this.keys.undoRead(installationId, confirm))) === 1;
  }

  /** What the kept read saw of these records; a record it did not read (or cannot parse) is absent. */
  async get(
    installationId: string,
    confirm: string,
    ids: readonly string[],
  ): Promise<Map<string, SeenRecord>> {
    const key = this.keys.undoRead(installationId, confirm);
    const out = new Map<string, SeenRecord>();
    for (const part of chunk([...ids], FIELDS_PER_CALL)) {
      const raw = await this.redis.hmget(key, ...part);
      part.forEach((id, i) => {
        const value = raw[i];
        if (value === null || value === undefined) return;
        const parsed = seenRecordSchema.safeParse(safeJson(value));
        if (parsed.success) out.set(id, parsed.data);
      });
    }
    return out;
  }

  /** Forgets the read (its set was applied). */
  async drop(installationId: string, confirm: string): Promise<void> {
    await this.redis.del(this.keys.undoRead(installationId, confirm));
  }
}

function safeJson(raw: string): unknown {
  // Not parseStoredJson: its null for an unparsable value would read here as a record the CRM no longer has.
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}
