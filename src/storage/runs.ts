import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { MATCH_STATUSES } from '../fields.js';
import type { RedisClient } from '../redis.js';
import { deleteByPattern } from '../redis.js';
import { parseStoredJson } from '../util/json.js';
import type { ActiveRun, ActiveRuns, RunLane, StartOrJoin } from './active-runs.js';
import type { Keys } from './keys.js';
import { LuaScript } from './lua-script.js';
import { dropRunCaches } from './run-caches.js';

/**
 * Sync runs: what `sync --wait`, `status` and the admin page show. Each batch stores its own result under its
 * id, so a batch that runs twice (retry, killed worker) overwrites rather than double-counts; totals are sums.
 * When the run is done or stopped its batches are folded into one summary on the run's hash and deleted: a kept
 * run then costs the same whatever the CRM's size, so the history is bounded by its count of runs.
 */

/** `preview` matches like a full run and writes nothing: its counts and samples say what a write would do. */
export const RUN_KINDS = ['initial', 'full', 'incremental', 'reconcile', 'preview'] as const;
export type RunKind = (typeof RUN_KINDS)[number];

const zeroOrCount = z.number().default(0);
const statusCounts = z.object(
  Object.fromEntries(MATCH_STATUSES.map((s) => [s, zeroOrCount])) as {
    [K in (typeof MATCH_STATUSES)[number]]: z.ZodDefault<z.ZodNumber>;
  },
);

export const recordFailureSchema = z.object({ recordId: z.string(), code: z.string(), message: z.string() });
export type RecordFailure = z.infer<typeof recordFailureSchema>;

/** One record as a preview shows it: what it would hold after the write. */
export const previewSampleSchema = z.object({
  recordId: z.string(),
  name: z.string().nullable(),
  status: z.enum(MATCH_STATUSES),
  slug: z.string().nullable(),
  /** The first review candidates, for `needs_review`. */
  candidates: z.array(z.string()).default([]),
});
export type PreviewSample = z.infer<typeof previewSampleSchema>;

export const batchResultSchema = z.object({
  records: z.number(),
  linked: z.number(),
  written: z.number(),
  /** A preview's records that a write would change (nothing is written in a preview). */
  wouldWrite: z.number().default(0),
  unchanged: z.number(),
  skipped: z.number(),
  failed: z.number(),
  statuses: statusCounts,
  errors: z.array(recordFailureSchema),
  /** A preview's samples: at most PREVIEW_SAMPLES_PER_BATCH per status. */
  samples: z.array(previewSampleSchema).default([]),
});
export type BatchResult = z.infer<typeof batchResultSchema>;

export const MAX_ERRORS_PER_BATCH = 20;
export const PREVIEW_SAMPLES_PER_BATCH = 3;
/** Samples per status a preview shows in all. */
export const PREVIEW_SAMPLES_PER_STATUS = 10;

export function emptyBatchResult(): BatchResult {
  return {
    records: 0,
    linked: 0,
    written: 0,
    wouldWrite: 0,
    unchanged: 0,
    skipped: 0,
    failed: 0,
    statuses: statusCounts.parse({}),
    errors: [],
    samples: [],
  };
}

const RUN_STATES = ['listing', 'processing', 'done', 'stopped'] as const;
export type RunState = (typeof RUN_STATES)[number];
const runStateSchema = z.enum(RUN_STATES);

const runKindSchema = z.enum(RUN_KINDS).catch('full');

/** The run hash as stored; fields written later (batchesTotal, finishedAt, ...) are absent until then. */
const runHashSchema = z.object({
  id: z.string(),
  installationId: z.string().default(''),
  kind: runKindSchema,
  state: runStateSchema.catch('listing'),
  startedAt: z.string().default(''),
  finishedAt: z.string().optional(),
  stoppedReason: z.string().optional(),
  recordsListed: z.coerce.number().catch(0),
  batchesTotal: z.coerce.number().optional(),
  /** A done or stopped run's batches folded (`runSummaryPartsSchema`, JSON); absent while they are kept. */
  summary: z.string().optional(),
  /** When the run last moved (a page listed, a batch ended), ms; absent on runs of older code. */
  progressAt: z.coerce.number().optional(),
  /** The run that superseded this one (it was stopped for it). */
  supersededBy: z.string().optional(),
  /** The runs this one superseded, comma-separated: their links are this run's too (undo). */
  supersedes: z.string().optional(),
  /** 'forget': a listing that forgets indexed records gone from the CRM (what it covers, `runRank`). */
  scope: z.string().optional(),
});

/** A run's batches summed: what `get` shows, and what a done or stopped run keeps instead of its batches. */
const runSummaryPartsSchema = z.object({
  batchesDone: z.number(),
  totals: batchResultSchema.omit({ errors: true, samples: true }),
  errors: z.array(recordFailureSchema),
  samples: z.array(previewSampleSchema),
});
type RunSummaryParts = z.infer<typeof runSummaryPartsSchema>;

const ADD_LISTED = LuaScript.load('runs-add-listed');
const addListedReply = z.enum(['counted', 'seen']);
const STOP = LuaScript.load('runs-stop');
const stopReply = z.enum(['stopped', 'not_running', 'batches_changed', 'stopped_now']);
const LISTING_DONE = LuaScript.load('runs-listing-done');
const listingDoneReply = z.union([z.literal('gone'), runStateSchema]);
const WIDEN = LuaScript.load('runs-widen');
const widenReply = z.union([z.literal('widened'), z.literal('gone'), runStateSchema]);
const FINISH = LuaScript.load('runs-finish');
const finishReply = z.enum(['finished', 'not_finished']);

/** Errors a run shows (and keeps once done) in all. */
const MAX_ERRORS_PER_RUN = 200;

/** Tries of `stop` to fold the batches before it stops the run without (its batches then stay until it leaves the history). */
const STOP_ATTEMPTS = 5;

export interface RunSummary {
  id: string;
  installationId: string;
  kind: RunKind;
  state: RunState;
  startedAt: string;
  finishedAt: string | null;
  stoppedReason: string | null;
  recordsListed: number;
  batchesTotal: number | null;
  batchesDone: number;
  totals: Omit<BatchResult, 'errors' | 'samples'>;
  errors: RecordFailure[];
  /** A preview's samples, at most PREVIEW_SAMPLES_PER_STATUS per status; empty for other runs. */
  samples: PreviewSample[];
  /** When the run last moved, ms (its start when it never did). */
  progressAt: number;
  /** The run this one was stopped for (its stop code 'superseded'): `sync --wait` follows it. */
  supersededBy: string | null;
  /** The runs this one superseded. */
  supersedes: string[];
  /** Whether its listing forgets indexed records gone from the CRM. */
  forgetUnlisted: boolean;
}

/** A run as the liveness watch sees it (pipeline/liveness-watch.ts). */
export interface RunProgress {
  id: string;
  installationId: string;
  kind: RunKind;
  state: RunState;
  progressAt: number;
  batchesTotal: number | null;
  batchesDone: number;
}

/** Why a run was stopped, as the metrics count it. */
export const STOP_CODES = ['superseded', 'stale', 'no_jobs', 'other'] as const;
export type StopCode = (typeof STOP_CODES)[number];

/** What a sync asked for got: a run of its own, the run under way (joined), or one that superseded it. */
export type SyncStart =
  | { runId: string; joined: false; supersededRunId: string | null }
  | { runId: string; joined: true };

/**
 * What a run covers: a full listing matches every record (2), one that also forgets records gone from the CRM
 * covers more (3); an incremental or reconcile run reads linked records only (1). A sync asked for during a
 * run of a lower rank supersedes it; one of the same or a lower rank joins it, and so does a full listing asked
 * for during another (one that forgets widens the run under way while it lists: SyncRuns.begin).
 */
export function runRank(kind: RunKind, forgetUnlisted = false): number {
  if (kind === 'incremental' || kind === 'reconcile' || kind === 'preview') return 1;
  return forgetUnlisted ? 3 : 2;
}

/** The least rank of a full listing: two full listings cover the same ground and join. */
export const FULL_LISTING_RANK = runRank('full');

export function laneOf(kind: RunKind): RunLane {
  return kind === 'preview' ? 'preview' : 'sync';
}

/** Runs kept in an installation's history (`recent`); older ones are deleted as new ones start. */
export const KEPT_RUNS = 50;

export class SyncRuns {
  /** The run under way on each installation's lanes (what a sync asked for joins). */
  readonly active: ActiveRuns;
  private stopped: (code: StopCode) => void = () => {};

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    active: ActiveRuns,
  ) {
    this.active = active;
  }

  /** Called once per run stopped, with why (the metrics' counter). */
  onStopped(listener: (code: StopCode) => void): void {
    this.stopped = listener;
  }

  /** Starts a run whatever runs already (tests, and what `begin` does once the lane is its). */
  async start(installationId: string, kind: RunKind): Promise<string> {
    const id = newRunId(installationId, kind);
    await this.create(id, installationId, kind, false);
    await this.addToHistory(installationId, id);
    return id;
  }

  /**
   * Starts a run on the installation's lane, or joins the one under way there, or supersedes it (runRank):
   * atomically, through the active-runs pointer. `adopt` is a run of older code found under way when the
   * pointer is new; `dead` the lane's run found ended or dead (never joined). The new run's hash exists before
   * the pointer names it, so a request that joins it always finds it.
   */
  async begin(
    installationId: string,
    kind: RunKind,
    options: {
      forgetUnlisted?: boolean;
      restart?: boolean;
      adopt?: ActiveRun | null;
      dead?: string | null;
    } = {},
  ): Promise<SyncStart | null> {
    const id = newRunId(installationId, kind);
    const forget = options.forgetUnlisted === true;
    await this.create(id, installationId, kind, forget);
    const request = {
      lane: laneOf(kind),
      runId: id,
      kind,
      rank: runRank(kind, forget),
      adopt: options.adopt ?? null,
      dead: options.dead ?? null,
      restart: options.restart === true,
      listingRank: FULL_LISTING_RANK,
    };
    let outcome: StartOrJoin = await this.active.startOrJoin(installationId, request);
    if (outcome.outcome === 'joined' && outcome.widened && forget) {
      // A full listing under way takes on forgetting what it does not list. Once its listing is done it cannot:
      // this listing supersedes it then, as a wider run always did.
      const widened = await WIDEN.run(this.redis, [this.keys.run(outcome.runId)], [], widenReply);
      if (widened !== 'widened')
        outcome = await this.active.startOrJoin(installationId, { ...request, restart: true });
    }
    if (outcome.outcome === 'gone' || outcome.outcome === 'joined') {
      await this.redis.unlink(this.keys.run(id));
      return outcome.outcome === 'gone' ? null : { runId: outcome.runId, joined: true };
    }
    await this.addToHistory(installationId, id);
    if (outcome.outcome === 'started') return { runId: id, joined: false, supersededRunId: null };
    const old = outcome.supersededRunId;
    // The pointer first names the superseding run, then the old one says so before it stops: a follower that
    // sees it stopped sees where to go; its links stay the new run's to undo (`supersededRuns`).
    await this.redis.hset(this.keys.run(id), 'supersedes', old);
    await this.redis.hset(this.keys.run(old), 'supersededBy', id);
    // The reason is what the admin's run list and the API show: it names the run that took over.
    await this.stop(old, `superseded by the full sync ${id}, which does its work`, 'superseded');
    return { runId: id, joined: false, supersededRunId: old };
  }

  private async create(id: string, installationId: string, kind: RunKind, forget: boolean): Promise<void> {
    const now = new Date();
    // Named before its hash exists: the watch drops a name whose run it cannot find or that ended.
    await this.redis.sadd(this.keys.runsUnderWay(), id);
    await this.redis.hset(this.keys.run(id), {
      id,
      installationId,
      kind,
      state: 'listing',
      startedAt: now.toISOString(),
      progressAt: String(now.getTime()),
      recordsListed: '0',
      ...(forget ? { scope: 'forget' } : {}),
    });
  }

  /**
   * The run's place in the installation's history: the hash and the list lie in different slots on a
   * cluster, so they are two commands; a run not yet in the list is only missing from `recent`.
   */
  private async addToHistory(installationId: string, id: string): Promise<void> {
    const [, dropped] = ((await this.redis
      .multi()
      .lpush(this.keys.runs(installationId), id)
      .lrange(this.keys.runs(installationId), KEPT_RUNS, -1)
      .ltrim(this.keys.runs(installationId), 0, KEPT_RUNS - 1)
      .exec()) ?? []) as [unknown, [Error | null, string[]] | undefined];
    // A run that falls out of the history takes its keys along: the history is bounded by count, not kept
    // forever. One command per run: each run is its own slot.
    for (const old of dropped?.[1] ?? []) {
      await this.redis.unlink(this.keys.run(old));
      await this.redis.unlink(this.keys.runBatches(old));
    }
  }

  /** The runs `runId` superseded, and those they superseded: their links are its links too. */
  async supersededRuns(runId: string): Promise<string[]> {
    const found: string[] = [];
    let next = [runId];
    while (next.length > 0 && found.length < KEPT_RUNS) {
      const raw = await Promise.all(next.map((id) => this.redis.hget(this.keys.run(id), 'supersedes')));
      next = raw.flatMap((r) => (r ? r.split(',') : [])).filter((id) => id !== runId && !found.includes(id));
      found.push(...next);
    }
    return found;
  }

  /**
   * Counts a listed page's records once: a lister killed after counting a page and before saving its place
   * lists that page again, which must not count it twice.
   */
  async addListed(runId: string, page: number, records: number): Promise<void> {
    await ADD_LISTED.run(this.redis, [this.keys.run(runId)], [page, records], addListedReply);
    await this.moved(runId);
  }

  /** Whether the run's listing forgets indexed records gone from the CRM (asked at its start, or since). */
  async forgetsUnlisted(runId: string): Promise<boolean> {
    return (await this.redis.hget(this.keys.run(runId), 'scope')) === 'forget';
  }

  /** Listing is complete: `batchesTotal` batches were enqueued in all. */
  async listingDone(runId: string, batchesTotal: number): Promise<void> {
    const state = await LISTING_DONE.run(
      this.redis,
      [this.keys.run(runId)],
      [batchesTotal, Date.now()],
      listingDoneReply,
    );
    if (state === 'processing') await this.maybeFinish(runId);
  }

  async recordBatch(runId: string, batchId: string, result: BatchResult): Promise<void> {
    await this.redis.hset(this.keys.runBatches(runId), batchId, JSON.stringify(result));
    await this.moved(runId);
    await this.maybeFinish(runId);
  }

  /**
   * The run moved: what tells a slow run from a dead one (a run without progress for a bounded time is
   * stopped). Only while it exists: a run deleted from the history is not written back.
   */
  private async moved(runId: string): Promise<void> {
    await this.redis.hset(this.keys.run(runId), 'progressAt', String(Date.now()));
  }

  /**
   * Stops a run, folding the batches it has so far like a done run's (a batch that ends later is added), and
   * takes it off its installation's lane.
   */
  async stop(runId: string, reason: string, code: StopCode = 'other'): Promise<void> {
    const keys = [this.keys.run(runId), this.keys.runBatches(runId)];
    for (let attempt = 0; ; attempt += 1) {
      const batches = await this.redis.hvals(this.keys.runBatches(runId));
      // A batch ending between the read and the script: read again; after a few, stop without folding.
      const fold = attempt < STOP_ATTEMPTS;
      const stopped = await STOP.run(
        this.redis,
        keys,
        [
          fold ? JSON.stringify(sumBatches(batches)) : '',
          fold ? batches.length : -1,
          reason,
          new Date().toISOString(),
        ],
        stopReply,
      );
      if (stopped === 'batches_changed') continue;
      if (stopped === 'stopped_now') this.stopped(code);
      await this.leaveLane(runId);
      return;
    }
  }

  private async leaveLane(runId: string): Promise<void> {
    const installationId = await this.redis.hget(this.keys.run(runId), 'installationId');
    if (installationId) await this.active.clear(installationId, runId);
    await this.redis.srem(this.keys.runsUnderWay(), runId);
  }

  /** The runs under way, as the liveness watch reads them (a stale name is dropped by `forgetEnded`). */
  async underWay(): Promise<string[]> {
    return this.redis.smembers(this.keys.runsUnderWay());
  }

  /** Drops a run that ended or is gone from the runs under way (what `leaveLane` missed: a killed process). */
  async forgetEnded(runId: string): Promise<void> {
    await this.redis.srem(this.keys.runsUnderWay(), runId);
  }

  /** What the liveness watch needs of a run, without reading its batches' results. */
  async progress(runId: string): Promise<RunProgress | null> {
    const [[, fields], [, batches]] = ((await this.redis
      .multi()
      .hmget(
        this.keys.run(runId),
        'installationId',
        'kind',
        'state',
        'progressAt',
        'startedAt',
        'batchesTotal',
      )
      .hlen(this.keys.runBatches(runId))
      .exec()) ?? [
      [null, []],
      [null, 0],
    ]) as [[unknown, (string | null)[]], [unknown, number]];
    const [installationId, kind, state, progressAt, startedAt, total] = fields;
    const parsedState = runStateSchema.safeParse(state);
    if (!installationId || !parsedState.success) return null;
    return {
      id: runId,
      installationId,
      kind: runKindSchema.parse(kind),
      state: parsedState.data,
      progressAt: Number(progressAt ?? Date.parse(startedAt ?? '')) || 0,
      batchesTotal: total === null ? null : Number(total),
      batchesDone: Number(batches) || 0,
    };
  }

  /** Whether the run counted this batch already (false once a done run folded its batches). */
  async hasBatch(runId: string, batchId: string): Promise<boolean> {
    return (await this.redis.hexists(this.keys.runBatches(runId), batchId)) === 1;
  }

  /**
   * Counts a batch that will not run again as failed, unless a result of it is there already (a run of it that
   * ended meanwhile is the truth): its run can then end, with those records among its failures.
   */
  async recordFailedBatch(runId: string, batchId: string, result: BatchResult): Promise<boolean> {
    const added = await this.redis.hsetnx(this.keys.runBatches(runId), batchId, JSON.stringify(result));
    if (added !== 1) return false;
    await this.moved(runId);
    await this.maybeFinish(runId);
    return true;
  }

  /** The run that superseded `runId`, or null. */
  async supersededBy(runId: string): Promise<string | null> {
    return this.redis.hget(this.keys.run(runId), 'supersededBy');
  }

  /** The run's state, or null when it is unknown. */
  async state(runId: string): Promise<RunState | null> {
    const state = await this.redis.hget(this.keys.run(runId), 'state');
    return state === null ? null : (runStateSchema.safeParse(state).data ?? null);
  }

  async batchesDone(runId: string): Promise<number> {
    const [state, summary] = await this.redis.hmget(this.keys.run(runId), 'state', 'summary');
    const kept = await this.redis.hlen(this.keys.runBatches(runId));
    const folded = this.folded(summary);
    if (!folded) return kept;
    // A stopped run's batches that ended after the stop are kept beside its summary; a done run's summary
    // holds them all (a batch recorded after it is a retry of one in it).
    return state === 'stopped' ? folded.batchesDone + kept : folded.batchesDone;
  }

  private async maybeFinish(runId: string): Promise<void> {
    const [total, state] = await this.redis.hmget(this.keys.run(runId), 'batchesTotal', 'state');
    if (total === null || state !== 'processing') return;
    // Counted first: every batch ends here, and reading them all each time would make a run's cost grow with
    // the square of its batches; only the last one reads them.
    if ((await this.redis.hlen(this.keys.runBatches(runId))) < Number(total)) return;
    const batches = await this.redis.hvals(this.keys.runBatches(runId));
    const finished = await FINISH.run(
      this.redis,
      [this.keys.run(runId), this.keys.runBatches(runId)],
      [JSON.stringify(sumBatches(batches)), batches.length, new Date().toISOString()],
      finishReply,
    );
    if (finished !== 'finished') return;
    await this.leaveLane(runId);
    await dropRunCaches(this.redis, this.keys, runId);
  }

  private folded(raw: string | null | undefined): RunSummaryParts | null {
    return raw ? parseStoredJson(runSummaryPartsSchema, raw) : null;
  }

  async get(runId: string): Promise<RunSummary | null> {
    const stored = runHashSchema.safeParse(await this.redis.hgetall(this.keys.run(runId)));
    if (!stored.success) return null;
    const h = stored.data;
    const folded = this.folded(h.summary);
    const parts =
      folded && h.state !== 'stopped'
        ? folded
        : sumBatches(await this.redis.hvals(this.keys.runBatches(runId)), folded ?? undefined);
    return {
      id: h.id,
      installationId: h.installationId,
      kind: h.kind,
      state: h.state,
      startedAt: h.startedAt,
      finishedAt: h.finishedAt ?? null,
      stoppedReason: h.stoppedReason ?? null,
      recordsListed: h.recordsListed,
      batchesTotal: h.batchesTotal ?? null,
      batchesDone: parts.batchesDone,
      totals: parts.totals,
      errors: parts.errors,
      samples: parts.samples,
      progressAt: h.progressAt ?? (Date.parse(h.startedAt) || 0),
      supersededBy: h.supersededBy ?? null,
      supersedes: h.supersedes ? h.supersedes.split(',') : [],
      forgetUnlisted: h.scope === 'forget',
    };
  }

  /** Deletes an installation's whole sync history (the list itself goes with the installation's keys). */
  async removeAll(installationId: string): Promise<void> {
    for (const runId of await this.redis.lrange(this.keys.runs(installationId), 0, -1)) {
      await deleteByPattern(this.redis, this.keys.runPattern(runId));
      await this.redis.srem(this.keys.runsUnderWay(), runId);
    }
  }

  async recent(installationId: string, count = 10): Promise<RunSummary[]> {
    const ids = await this.redis.lrange(this.keys.runs(installationId), 0, count - 1);
    const runs = await Promise.all(ids.map((id) => this.get(id)));
    return runs.filter((r): r is RunSummary => r !== null);
  }
}

function newRunId(installationId: string, kind: RunKind): string {
  return `${kind}-${installationId}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
}

/**
 * Batch results summed, onto `start` when given (a stopped run's summary); errors and samples up to what a run
 * shows. Unreadable results are left out.
 */
function sumBatches(raws: readonly string[], start?: RunSummaryParts): RunSummaryParts {
  const totals = { ...emptyBatchResult(), ...structuredClone(start?.totals ?? {}) };
  const errors: RecordFailure[] = [...(start?.errors ?? [])];
  const samples: PreviewSample[] = [...(start?.samples ?? [])];
  const sampled = new Map<string, number>();
  for (const sample of samples) sampled.set(sample.status, (sampled.get(sample.status) ?? 0) + 1);
  for (const raw of raws) {
    const b = parseStoredJson(batchResultSchema, raw);
    if (b === null) continue;
    totals.records += b.records;
    totals.linked += b.linked;
    totals.written += b.written;
    totals.wouldWrite += b.wouldWrite;
    for (const sample of b.samples) {
      const n = sampled.get(sample.status) ?? 0;
      if (n >= PREVIEW_SAMPLES_PER_STATUS) continue;
      sampled.set(sample.status, n + 1);
      samples.push(sample);
    }
    totals.unchanged += b.unchanged;
    totals.skipped += b.skipped;
    totals.failed += b.failed;
    for (const s of MATCH_STATUSES) totals.statuses[s] += b.statuses[s];
    if (errors.length < MAX_ERRORS_PER_RUN)
      errors.push(...b.errors.slice(0, MAX_ERRORS_PER_RUN - errors.length));
  }
  const { errors: _errors, samples: _samples, ...sums } = totals;
  return { batchesDone: (start?.batchesDone ?? 0) + raws.length, totals: sums, errors, samples };
}
