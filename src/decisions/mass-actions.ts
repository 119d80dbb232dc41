import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { LINK_SOURCES, MATCH_STATUSES } from '../fields.js';
import { execOrThrow, type RedisClient } from '../redis.js';
import type { Keys } from '../storage/keys.js';
import { reviewCandidateSchema } from '../storage/review-codec.js';
import { chunk } from '../util/chunk.js';
import { parseStoredJson } from '../util/json.js';
import { decisionActorSchema } from './decision-log.js';

/**
 * Mass actions (an undone run, a bulk accept or reject, the undo of one of those) as kept for their own undo:
 * each record's link before and after, and the decision log's mark of the action's last entry. Undoing one
 * restores each record's `before` unless a person or an admin decided about it after that mark
 * (DecisionLog.touchedAfter). Kept for as long as a run's links are (30 days) and for the latest
 * MASS_ACTIONS_LISTED per installation; deleted with the installation.
 */

const KEEP_SECONDS = 30 * 24 * 3600;
export const MASS_ACTIONS_LISTED = 50;
/**
 * Records per element of an action's records list: a 100,000-record undo is 100 values of about 150 KB, not one
 * of 15 MB that every listing of recent actions read and parsed (until 2026-11-27).
 */
export const MASS_RECORDS_PER_VALUE = 1_000;

/** A record's link as a mass action found or left it. */
export const linkStateSchema = z.object({
  slug: z.string().nullable(),
  source: z.enum(LINK_SOURCES).nullable(),
  status: z.enum(MATCH_STATUSES).nullable(),
  /** The review candidates it waited with (a bulk decision's records), restored with it. */
  candidates: z.array(reviewCandidateSchema).optional(),
  /** Slugs the action added to the record's rejected ones (a bulk reject): taken out again by its undo. */
  rejected: z.array(z.string()).optional(),
});
export type LinkState = z.infer<typeof linkStateSchema>;

export const MASS_KINDS = ['undo-run', 'accept-first', 'reject', 'restore'] as const;
export type MassKind = (typeof MASS_KINDS)[number];

const massRecordSchema = z.object({ id: z.string(), before: linkStateSchema, after: linkStateSchema });

export const massActionSchema = z.object({
  id: z.string(),
  kind: z.enum(MASS_KINDS),
  at: z.string(),
  by: decisionActorSchema,
  /** The run undone (`undo-run`). */
  runId: z.string().optional(),
  /** The mass action this one undid (`restore`). */
  undoes: z.string().optional(),
  /** The decision log's id of the action's last entry: records decided about after it are left alone. */
  mark: z.string().nullable(),
  /** How many records it changed, and how many of those it was asked about it left alone. */
  done: z.number(),
  kept: z.number(),
  records: z.array(massRecordSchema),
  /** When it was undone, and by which mass action (so it is offered once). */
  undoneBy: z.string().optional(),
});
export type MassAction = z.infer<typeof massActionSchema>;

/** What the action's own key holds and a listing reads: all but its records, which have a list of their own. */
const massSummarySchema = massActionSchema.omit({ records: true });
export type MassActionSummary = z.infer<typeof massSummarySchema>;
/** An action saved before 2026-11-27 holds its records in the same value. */
const storedSummarySchema = massSummarySchema.extend({ records: z.array(massRecordSchema).optional() });
const recordsValueSchema = z.array(massRecordSchema);

export function newMassId(): string {
  return `m${Date.now().toString(36)}${randomBytes(4).toString('hex')}`;
}

export class MassActionLog {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  /**
   * The records first, then the summary and its place in the list in one transaction: an action is listed
   * only once all of its records are kept (a process that dies between leaves a records list that expires).
   */
  async save(installationId: string, action: MassAction): Promise<void> {
    const { records, ...summary } = massActionSchema.parse(action);
    const recordsKey = this.keys.massActionRecords(installationId, action.id);
    const write = this.redis.pipeline().del(recordsKey);
    for (const part of chunk(records, MASS_RECORDS_PER_VALUE)) write.rpush(recordsKey, JSON.stringify(part));
    await execOrThrow(write.expire(recordsKey, KEEP_SECONDS));
    await execOrThrow(
      this.redis
        .multi()
        .set(this.keys.massAction(installationId, action.id), JSON.stringify(summary), 'EX', KEEP_SECONDS)
        .lrem(this.keys.massActions(installationId), 0, action.id)
        .lpush(this.keys.massActions(installationId), action.id)
        .ltrim(this.keys.massActions(installationId), 0, MASS_ACTIONS_LISTED - 1),
    );
  }

  /** Says the action was undone (by `undoneBy`), rewriting its summary only, within the time it has left. */
  async markUndone(installationId: string, massId: string, undoneBy: string): Promise<void> {
    const key = this.keys.massAction(installationId, massId);
    const stored = parseStoredJson(storedSummarySchema, await this.redis.get(key));
    if (!stored) return;
    await this.redis.set(key, JSON.stringify({ ...stored, undoneBy }), 'KEEPTTL');
  }

  /**
   * The action with its records, or null when it is unknown, expired, or its records are not all there (an
   * undo of part of an action would look complete).
   */
  async get(installationId: string, massId: string): Promise<MassAction | null> {
    if (!/^[a-z0-9]{1,40}$/.test(massId)) return null;
    const stored = parseStoredJson(
      storedSummarySchema,
      await this.redis.get(this.keys.massAction(installationId, massId)),
    );
    if (!stored) return null;
    if (stored.records) return { ...stored, records: stored.records };
    const values = await this.redis.lrange(this.keys.massActionRecords(installationId, massId), 0, -1);
    const records = values.flatMap((v) => parseStoredJson(recordsValueSchema, v) ?? []);
    return records.length === stored.done ? { ...stored, records } : null;
  }

  /** The newest first, without their records; ones expired since are left out. */
  async recent(installationId: string, count = MASS_ACTIONS_LISTED): Promise<MassActionSummary[]> {
    const ids = await this.redis.lrange(this.keys.massActions(installationId), 0, count - 1);
    if (ids.length === 0) return [];
    const values = await this.redis.mget(...ids.map((id) => this.keys.massAction(installationId, id)));
    return values.flatMap((v) => {
      const parsed = parseStoredJson(massSummarySchema, v);
      return parsed ? [parsed] : [];
    });
  }
}
