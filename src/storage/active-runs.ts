import { z } from 'zod';
import type { RedisClient } from '../redis.js';
import type { Keys } from './keys.js';
import { LuaScript } from './lua-script.js';

/**
 * One pass at a time per installation: the run under way on each of an installation's lanes. A sync asked
 * for while one runs joins it; one that asks for more (a full sync during an incremental or reconcile run)
 * supersedes it, unless both are full listings: those join, what was listed and queued stays. A preview has a lane of its own: it never joins a sync nor blocks one, and two previews join
 * each other. The pointer is written by one script (runs-start-or-join.lua), never read then written.
 */

export const RUN_LANES = ['sync', 'preview'] as const;
export type RunLane = (typeof RUN_LANES)[number];

export type StartOrJoin =
  | { outcome: 'started'; runId: string }
  /** `widened`: the request covers more than the run it joined (a full listing that also forgets). */
  | { outcome: 'joined'; runId: string; kind: string; widened?: true }
  | { outcome: 'superseded'; runId: string; supersededRunId: string }
  | { outcome: 'gone' };

const START_OR_JOIN = LuaScript.load('runs-start-or-join');
const CLEAR = LuaScript.load('runs-active-clear');
const clearReply = z.enum(['cleared', 'not_active']);

const startReply = z.union([
  z
    .tuple([z.literal('started'), z.string()])
    .transform(([, runId]) => ({ outcome: 'started' as const, runId })),
  z
    .tuple([z.literal('joined'), z.string(), z.string()])
    .transform(([, runId, kind]) => ({ outcome: 'joined' as const, runId, kind })),
  z
    .tuple([z.literal('joined'), z.string(), z.string(), z.literal('widened')])
    .transform(([, runId, kind]) => ({ outcome: 'joined' as const, runId, kind, widened: true as const })),
  z
    .tuple([z.literal('superseded'), z.string(), z.string()])
    .transform(([, runId, supersededRunId]) => ({ outcome: 'superseded' as const, runId, supersededRunId })),
  z.tuple([z.literal('gone')]).transform(() => ({ outcome: 'gone' as const })),
]);

/** A lane's run as the pointer holds it. */
export interface ActiveRun {
  runId: string;
  kind: string;
  rank: number;
}

export interface StartOrJoinRequest {
  lane: RunLane;
  runId: string;
  kind: string;
  rank: number;
  /** A run started before the pointer existed (older code), taken as the lane's when the pointer is new. */
  adopt?: ActiveRun | null;
  /** The lane's run, found ended or dead: never joined. */
  dead?: string | null;
  /** Supersede the lane's run whatever it covers: it ran under settings that changed since. */
  restart?: boolean;
  /** The least rank of a full listing: two of them join (the wider request widens the run), never supersede. */
  listingRank?: number;
}

export class ActiveRuns {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  /** The lane's run, or null; `known` is false while no run was ever started through the pointer. */
  async current(installationId: string, lane: RunLane): Promise<{ known: boolean; run: ActiveRun | null }> {
    const [seen, runId, kind, rank] = await this.redis.hmget(
      this.keys.activeRuns(installationId),
      `${lane}:seen`,
      lane,
      `${lane}:kind`,
      `${lane}:rank`,
    );
    return {
      known: seen !== null,
      run: runId ? { runId, kind: kind ?? '', rank: Number(rank ?? 0) } : null,
    };
  }

  async startOrJoin(installationId: string, request: StartOrJoinRequest): Promise<StartOrJoin> {
    const adopt = request.adopt ?? null;
    return START_OR_JOIN.run(
      this.redis,
      [this.keys.installation(installationId), this.keys.activeRuns(installationId)],
      [
        request.lane,
        request.runId,
        request.kind,
        request.rank,
        adopt?.runId ?? '',
        adopt?.kind ?? '',
        adopt?.rank ?? 0,
        request.dead ?? '',
        request.restart ? '1' : '0',
        request.listingRank ?? 0,
      ],
      startReply,
    );
  }

  /** Takes an ended run off its lane (a no-op when a later run holds the lane). */
  async clear(installationId: string, runId: string): Promise<void> {
    await CLEAR.run(this.redis, [this.keys.activeRuns(installationId)], [runId], clearReply);
  }
}
