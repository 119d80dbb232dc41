import { z } from 'zod';
import type { RedisClient } from '../redis.js';
import type { Keys } from '../storage/keys.js';
import { LuaScript } from '../storage/lua-script.js';
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
  /** An admin undid a mass action (an undone run, a bulk accept or reject): the record's earlier link is back. */
  'restore',
] as const;
export type DecisionAction = (typeof DECISION_ACTIONS)[number];

/**
 * Who decided. The admin token is shared, so an admin is told apart by session (a short hash of the session
 * id, never the id itself) or as a bearer-token caller; a CRM user by the id the CRM gave, when it gave one.
 */
export const decisionActorSchema = z.object({
  kind: z.enum(['admin-session', 'admin-token', 'crm-user', 'crm']),
  id: z.string().nullable(),
  /** The admin's name, when they signed in (or called the API) with a named token (`ADMIN_TOKENS`). */
  name: z.string().optional(),
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
  /** The mass action (storage/mass-actions.ts) this decision was part of: what "undo this" takes back. */
  massId: z.string().optional(),
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

/** Appends the entries and sets each record's touch mark in the same step (decisions-add.lua). */
const ADD_AND_MARK = LuaScript.load('decisions-add');
const addAndMarkReply = z.string();
const ENTRIES_PER_SCRIPT = 1_000;

/**
 * Where a record's last human decision stands: the decision log's stream id (`<ms>-<seq>`), ordered. A mark
 * for a moment rather than an entry (a run's start) is `markBefore(ms)`: it sorts before every entry of that ms.
 */
export type TouchMark = string;

export function markBefore(ms: number): TouchMark {
  return `${Math.max(0, ms - 1)}-18446744073709551615`;
}

/** Stream ids compare by their two numbers, not as text ("9-0" is older than "10-0"). */
export function compareMarks(a: TouchMark, b: TouchMark): number {
  const [am = '0', as = '0'] = a.split('-');
  const [bm = '0', bs = '0'] = b.split('-');
  const ms = BigInt(am) - BigInt(bm);
  if (ms !== 0n) return ms < 0n ? -1 : 1;
  const seq = BigInt(as) - BigInt(bs);
  return seq === 0n ? 0 : seq < 0n ? -1 : 1;
}

export class DecisionLog {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly size = DECISION_LOG_SIZE,
  ) {}

  /**
   * Appends decisions (one round trip per thousand); the stream is trimmed to its size as it grows. Each record is marked
   * as touched by a person or an admin at its entry (see `touchedAfter`). Returns the last entry's id, null
   * when nothing was added.
   */
  async add(installationId: string, decisions: readonly NewDecision[]): Promise<TouchMark | null> {
    if (decisions.length === 0) return null;
    const now = new Date().toISOString();
    let last: TouchMark | null = null;
    // A large undo logs one entry per record: a script per thousand keeps Redis answering others meanwhile.
    for (let i = 0; i < decisions.length; i += ENTRIES_PER_SCRIPT) {
      const args: (string | number)[] = [this.size];
      for (const d of decisions.slice(i, i + ENTRIES_PER_SCRIPT)) {
        args.push(d.recordId, JSON.stringify(storedSchema.parse({ ...d, at: d.at ?? now })));
      }
      last = await ADD_AND_MARK.run(
        this.redis,
        [this.keys.decisions(installationId), this.keys.touchMarks(installationId)],
        args,
        addAndMarkReply,
      );
    }
    return last;
  }

  /**
   * The records among `recordIds` that a person or an admin decided about after `mark`: what an undo leaves
   * alone. The marks outlive the capped log (one field per record, deleted with the installation); the log's
   * own entries after `mark` are read too, so decisions logged before the marks existed (an upgrade in place)
   * count as well.
   */
  async touchedAfter(
    installationId: string,
    recordIds: readonly string[],
    mark: TouchMark,
  ): Promise<Set<string>> {
    return (await this.touchedAfterIn(installationId, mark))(recordIds);
  }

  /**
   * `touchedAfter` for many pages of records against one mark (an undo of a large run): the log's entries after
   * the mark are read once, each page's touch marks when it is asked about.
   */
  async touchedAfterIn(
    installationId: string,
    mark: TouchMark,
  ): Promise<(recordIds: readonly string[]) => Promise<Set<string>>> {
    const logged = new Set<string>();
    const since = await this.redis.xrange(this.keys.decisions(installationId), `(${mark}`, '+');
    for (const [id, fields] of since) for (const d of this.parse(id, fields)) logged.add(d.recordId);
    return async (recordIds) => {
      const touched = new Set<string>();
      for (let i = 0; i < recordIds.length; i += 1_000) {
        const part = recordIds.slice(i, i + 1_000);
        if (part.length === 0) continue;
        const marks = await this.redis.hmget(this.keys.touchMarks(installationId), ...part);
        part.forEach((id, j) => {
          const m = marks[j];
          if (logged.has(id) || (m && compareMarks(m, mark) > 0)) touched.add(id);
        });
      }
      return touched;
    };
  }

  /** The newest decisions first, at most `count`. */
  async latest(installationId: string, count: number): Promise<Decision[]> {
    const raw = await this.redis.xrevrange(this.keys.decisions(installationId), '+', '-', 'COUNT', count);
    return raw.flatMap(([id, fields]) => this.parse(id, fields));
  }

  /**
   * A page of decisions, newest first, older than `before` (a decision's id; null: from the newest), and the id
   * to ask for the next page with (null: none older). A cursor into the stream, never a read of all of it.
   */
  async page(
    installationId: string,
    before: string | null,
    count: number,
  ): Promise<{ decisions: Decision[]; older: string | null }> {
    const raw = await this.redis.xrevrange(
      this.keys.decisions(installationId),
      before ? `(${before}` : '+',
      '-',
      'COUNT',
      count + 1,
    );
    const decisions = raw.slice(0, count).flatMap(([id, fields]) => this.parse(id, fields));
    return { decisions, older: raw.length > count ? (raw[count - 1]?.[0] ?? null) : null };
  }

  /** Decisions about a record id or a report slug, newest first: up to `limit` and how many there are. */
  async search(
    installationId: string,
    query: string,
    limit: number,
  ): Promise<{ decisions: Decision[]; total: number }> {
    const found = (await this.all(installationId))
      .filter((d) => d.recordId === query || d.slug === query)
      .reverse();
    return { decisions: found.slice(0, limit), total: found.length };
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
