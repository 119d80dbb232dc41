import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { LINK_SOURCES, MATCH_STATUSES } from '../fields.js';
import type { RedisClient } from '../redis.js';
import type { Keys } from '../storage/keys.js';
import { reviewCandidateSchema } from '../storage/review-codec.js';
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
  records: z.array(z.object({ id: z.string(), before: linkStateSchema, after: linkStateSchema })),
  /** When it was undone, and by which mass action (so it is offered once). */
  undoneBy: z.string().optional(),
});
export type MassAction = z.infer<typeof massActionSchema>;

export function newMassId(): string {
  return `m${Date.now().toString(36)}${randomBytes(4).toString('hex')}`;
}

export class MassActionLog {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  async save(installationId: string, action: MassAction): Promise<void> {
    const value = JSON.stringify(massActionSchema.parse(action));
    await this.redis
      .multi()
      .set(this.keys.massAction(installationId, action.id), value, 'EX', KEEP_SECONDS)
      .lrem(this.keys.massActions(installationId), 0, action.id)
      .lpush(this.keys.massActions(installationId), action.id)
      .ltrim(this.keys.massActions(installationId), 0, MASS_ACTIONS_LISTED - 1)
      .exec();
  }

  async get(installationId: string, massId: string): Promise<MassAction | null> {
    if (!/^[a-z0-9]{1,40}$/.test(massId)) return null;
    return parseStoredJson(
      massActionSchema,
      await this.redis.get(this.keys.massAction(installationId, massId)),
    );
  }

  /** The newest first; ones expired since are left out. */
  async recent(installationId: string, count = MASS_ACTIONS_LISTED): Promise<MassAction[]> {
    const ids = await this.redis.lrange(this.keys.massActions(installationId), 0, count - 1);
    if (ids.length === 0) return [];
    const values = await this.redis.mget(...ids.map((id) => this.keys.massAction(installationId, id)));
    return values.flatMap((v) => {
      const parsed = parseStoredJson(massActionSchema, v);
      return parsed ? [parsed] : [];
    });
  }
}
