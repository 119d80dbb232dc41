import { z } from 'zod';
import type { RedisClient } from '../redis.js';
import type { Keys } from '../storage/keys.js';
import { parseStoredJson } from '../util/json.js';

/**
 * Who decided what about a record's link, when, and on what evidence: admin review decisions (one by one or
 * in bulk), unlinks, undos and re-matches, and a person's own change of `report_slug` in the CRM. One Redis
 * stream per installation, capped at DECISION_LOG_SIZE entries (the oldest fall off), so a busy
 * installation cannot grow it without bound. The log is an audit trail for people; the decision itself lives
 * on the CRM record (`report_link_source`), so losing the log loses history, never a decision.
 */

export const DECISION_LOG_SIZE = 10_000;

export const DECISION_ACTIONS = [
  /** An admin accepted one of the offered candidates. */
  'accept',
  /** An admin rejected every candidate: the record is `no_match` by that decision. */
  'reject',
  /** A slug was set by hand: an admin on the review queue, or a person in the CRM. */
  'set',
  /** A person cleared `report_slug` in the CRM: `no_match` by their decision. */
  'clear',
  /** An admin's "this is not the company". */
  'unlink',
  /** An admin took back the auto-links of one run. */
  'undo',
  /** An admin lifted a person's or an admin's `no_match`: the record is matched again. */
  'rematch',
  /** A person asked the report service for a report on a record without one (a CRM's record card). */
  'request',
] as const;
export type DecisionAction = (typeof DECISION_ACTIONS)[number];

/**
 * Who decided. The admin token is shared, so an admin is told apart by session (a short hash of the session
 * id, never the id itself) or as a bearer-token caller; a CRM user by the id the CRM gave, when it gave one.
 */
export const decisionActorSchema = z.object({
  kind: z.enum(['admin-session', 'admin-token', 'crm-user', 'crm']),
  id: z.string().nullable(),
});
export type DecisionActor = z.infer<typeof decisionActorSchema>;

export const decisionEvidenceSchema = z.object({
  /** The review candidate decided on (accept), or the ones rejected. */
  candidates: z
    .array(z.object({ slug: z.string(), score: z.number().nullish(), why: z.string().nullish() }))
    .optional(),
  /** How many candidates the review item offered. */
  offered: z.number().optional(),
  /** The slug the record held before (unlink, undo, clear). */
  previousSlug: z.string().nullish(),
  /** The run whose auto-links were undone. */
  runId: z.string().optional(),
});
export type DecisionEvidence = z.infer<typeof decisionEvidenceSchema>;

export const decisionSchema = z.object({
  /** The stream entry id: unique and ordered; `at` is for people. */
  id: z.string(),
  at: z.string(),
  action: z.enum(DECISION_ACTIONS),
  /** Made as part of one bulk request (review at scale, an undo). */
  bulk: z.boolean(),
  recordId: z.string(),
  /** The slug the record is linked to by this decision; null when it leaves the record without a link. */
  slug: z.string().nullable(),
  by: decisionActorSchema,
  evidence: decisionEvidenceSchema,
});
export type Decision = z.infer<typeof decisionSchema>;
export type NewDecision = Omit<Decision, 'id' | 'at'> & { at?: string };

const storedSchema = decisionSchema.omit({ id: true });

export class DecisionLog {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly size = DECISION_LOG_SIZE,
  ) {}

  /** Appends decisions in one round trip; the stream is trimmed to its size as it grows. */
  async add(installationId: string, decisions: readonly NewDecision[]): Promise<void> {
    if (decisions.length === 0) return;
    const key = this.keys.decisions(installationId);
    const now = new Date().toISOString();
    const tx = this.redis.multi();
    for (const d of decisions) {
      const entry = storedSchema.parse({ ...d, at: d.at ?? now });
      tx.xadd(key, 'MAXLEN', String(this.size), '*', 'e', JSON.stringify(entry));
    }
    await tx.exec();
  }

  /** The newest decisions first, at most `count`. */
  async latest(installationId: string, count: number): Promise<Decision[]> {
    const raw = await this.redis.xrevrange(this.keys.decisions(installationId), '+', '-', 'COUNT', count);
    return raw.flatMap(([id, fields]) => this.parse(id, fields));
  }

  /** Every decision still kept, oldest first (the CSV export). */
  async all(installationId: string): Promise<Decision[]> {
    const raw = await this.redis.xrange(this.keys.decisions(installationId), '-', '+');
    return raw.flatMap(([id, fields]) => this.parse(id, fields));
  }

  async count(installationId: string): Promise<number> {
    return this.redis.xlen(this.keys.decisions(installationId));
  }

  private parse(id: string, fields: string[]): Decision[] {
    const at = fields.indexOf('e');
    const value = at >= 0 ? fields[at + 1] : undefined;
    const stored = value === undefined ? null : parseStoredJson(storedSchema, value);
    return stored ? [{ id, ...stored }] : [];
  }
}
