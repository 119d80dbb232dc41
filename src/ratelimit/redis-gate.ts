import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { AdaptiveGate, RateQuota } from '../crm/request-gate.js';
import type { RedisClient } from '../redis.js';
import { gateKeys } from '../storage/keys.js';
import { LuaScript } from '../storage/lua-script.js';

/**
 * A rate gate for one upstream identity, shared by every process through Redis. It uses GCRA (one key holding
 * the theoretical arrival time), which allows a burst of `max` and then spaces requests evenly, plus a pause
 * key that a 429 sets so that everyone sharing the identity holds off, not just the caller that was refused.
 * Both decisions run in one Lua script with Redis's clock, so process clocks never disagree.
 *
 * An adaptive gate (`adaptive`, the report service's keys: the service publishes no limits) also keeps the
 * rate it has learnt in Redis, next to the arrival time, and the GCRA takes its spacing and burst from there,
 * never faster than `max` per `windowMs` (the operator's ceiling, and the rate while no 429 was seen):
 *
 * - a 429 pauses everyone for its Retry-After, cuts the rate (`cut`, once for every request admitted before the
 *   cut, and at most once every `cutIntervalMs`: a burst of 429s is one signal) and takes away the burst: requests go evenly spaced, because a service
 *   with fixed windows refuses a burst on top of a steady rate near its limit;
 * - each `quietMs` without a 429 raises the rate by `raiseShare` of the ceiling and doubles the burst, up to
 *   the ceiling, so a service that allows more gets it back;
 * - rate-limit headers, when the service sends them, set the rate to their limit per window directly (never
 *   above the ceiling, and raises stop there), evenly spaced; a 429 that states its quota pauses everyone until
 *   the window resets (Retry-After, or the stated reset) without a cut, since the rate is known.
 */

const ACQUIRE = LuaScript.load('gate-acquire');
const PAUSE = LuaScript.load('gate-pause');
const REFUSED = LuaScript.load('gate-refused');
const QUOTA = LuaScript.load('gate-quota');

/** gate-acquire.lua's reply: the ms to wait (0: admitted) and the time admitted. */
const admitReply = z.tuple([z.number(), z.number()]);
const pauseReply = z.literal('paused');
const refusedReply = z.enum(['cut', 'not_cut']);
const quotaReply = z.literal('set');

export interface AdaptiveRateOptions {
  /** Factor of the rate after a 429. */
  cut?: number;
  /** Share of the ceiling added after each quiet period. */
  raiseShare?: number;
  /** Time without a 429 (or any other change) before the rate is raised. */
  quietMs?: number;
  /** The rate never goes below this share of the ceiling. */
  floorShare?: number;
  /** The burst a cut leaves, in ms of the rate (0: none, requests evenly spaced). */
  minBurstMs?: number;
  /**
   * Least time between two cuts. A service that refuses everything for a while (Retry-After short or absent)
   * is not telling the rate apart at every pause: without this a two-second storm of 429s cut eight times.
   */
  cutIntervalMs?: number;
  /** How long the learnt rate is kept in Redis after its last change; then the ceiling again. */
  ttlMs?: number;
}

export const ADAPTIVE_DEFAULTS: Required<AdaptiveRateOptions> = {
  cut: 0.7,
  raiseShare: 0.1,
  quietMs: 60_000,
  floorShare: 0.05,
  minBurstMs: 0,
  cutIntervalMs: 2_000,
  ttlMs: 60 * 60_000,
};

/** The longest a caller sleeps before asking the gate again. */
const MAX_SLEEP_MS = 1_000;

/**
 * An urgent or hot caller's waiting mark outlives its sleep (at most MAX_SLEEP_MS plus 20 ms of jitter) by this
 * much, so it asks again before the mark lapses; a mark left by a caller that died lapses this long after its
 * sleep. The caller drops it once admitted: kept for the margin, it held the lanes below back after every wait,
 * so single changes a few hundred ms apart could leave a storm's re-reads hardly a slot.
 */
const URGENT_MARK_MARGIN_MS = 100;

/** A stated quota is paced this share under its limit (see QUOTA). */
const STATED_QUOTA_MARGIN = 0.02;

/** Headers with the same limit and window are sent to Redis at most this often (they set the same state). */
const QUOTA_REFRESH_MS = 30_000;

export interface RateGateOptions {
  /** Requests allowed per window: for an adaptive gate, the ceiling. */
  max: number;
  windowMs: number;
  /** Reported once per wait, for metrics. */
  onWait?: (ms: number) => void;
  /** A request that would wait longer than this gives up with `GateTimeoutError`. */
  maxWaitMs?: number;
  /**
   * Milliseconds of the burst this gate's callers leave to callers without a reserve on the same identity. A
   * deferrable lane (backfills, sweeps) reserves part of the burst, so urgent requests still pass at once
   * while it is busy; both lanes get the full steady rate when the other is idle. An adaptive gate keeps the
   * same share of whatever burst it has learnt. A gate with a reserve is deferrable in the steady rate too
   * (see `lane`).
   */
  reserveMs?: number;
  /**
   * `deferrable` callers admit nothing while an `urgent` caller of the same identity waits for a slot, so a
   * saturating backfill leaves the rate to events and changes whenever they want it (a 429 that took the burst
   * away takes the reserve with it; this does not go). `hot` callers (a storm's coalesced re-reads) sit
   * between: they admit nothing while an urgent caller waits, and deferrable callers admit nothing while they
   * wait, so a single change never queues behind a storm's backlog of re-reads on the key, and the storm never
   * behind a backfill. Default: deferrable when `reserveMs` is set, else urgent.
   */
  lane?: GateLane;
  /** Learn the upstream's rate below `max` (see above). */
  adaptive?: AdaptiveRateOptions;
  /** Told when this gate's cut lowered the rate, for metrics and logs. */
  onCut?: () => void;
}

/**
 * What an adaptive gate has learnt, as stored in Redis, for status pages: read only, nothing is written. Times
 * are Redis's clock (the scripts use it), as ISO strings.
 */
export interface GateState {
  /** The rate in force now, per minute: the learnt one, or the ceiling when nothing is learnt. */
  perMinute: number;
  /** The operator's ceiling (`max` per `windowMs`), per minute. */
  ceilingPerMinute: number;
  /** The burst allowed on top of the steady rate, in ms of it. */
  burstMs: number;
  /** False when nothing is stored: no 429 or stated quota in the last `ttlMs`, the gate runs at its ceiling. */
  learnt: boolean;
  /** When the stored rate last changed (a cut, a raise after a quiet period, a stated quota). */
  changedAt: string | null;
  /**
   * The last cut. Only a 429 without a stated quota cuts (REFUSED), so the reason is known without being
   * stored; a 429 that states its quota pauses without a cut and shows as `statedQuota` instead.
   */
  lastCut: { at: string; reason: string } | null;
  /** The rate the service's rate-limit headers stated, when it sent any: the learnt rate stops there. */
  statedQuota: { perMinute: number; windowMs: number } | null;
  /** When the learnt rate lapses back to the ceiling if nothing changes it meanwhile. */
  keptUntil: string | null;
}

/** Who goes first on a gate: urgent, then hot, then deferrable (see RateGateOptions.lane). */
export type GateLane = 'urgent' | 'hot' | 'deferrable';

/** gate-acquire.lua's ARGV[8] for each lane. */
const LANE_ARG: Record<GateLane, number> = { urgent: 0, deferrable: 1, hot: 2 };

export const CUT_REASON = 'the report service answered 429 Too Many Requests';

export class GateTimeoutError extends Error {
  readonly code = 'GATE_TIMEOUT';
  constructor(
    readonly identity: string,
    readonly waitMs: number,
  ) {
    super(`rate gate ${identity}: next slot is ${waitMs} ms away`);
    this.name = 'GateTimeoutError';
  }
}

export class RedisRateGate implements AdaptiveGate {
  /** The ceiling's spacing, in (fractional) milliseconds. */
  private readonly interval: number;
  private readonly reserveShare: number;
  private readonly adaptive: Required<AdaptiveRateOptions> | null;
  private readonly keys: ReturnType<typeof gateKeys>;
  private readonly lane: GateLane;
  private lastQuota: { limit: number; windowMs: number; at: number } | null = null;

  constructor(
    private readonly redis: RedisClient,
    /** Redis key stem; never a secret (hash API keys with `identityOf`). */
    readonly identity: string,
    private readonly options: RateGateOptions,
  ) {
    this.interval = options.windowMs / options.max;
    this.reserveShare = Math.min(1, Math.max(0, (options.reserveMs ?? 0) / options.windowMs));
    this.adaptive = options.adaptive ? { ...ADAPTIVE_DEFAULTS, ...options.adaptive } : null;
    this.keys = gateKeys(identity);
    this.lane = options.lane ?? ((options.reserveMs ?? 0) > 0 ? 'deferrable' : 'urgent');
  }

  async acquire(): Promise<void> {
    await this.admit();
  }

  async admit(): Promise<number> {
    let waited = 0;
    for (;;) {
      const [wait, admittedAt] = await ACQUIRE.run(
        this.redis,
        [this.keys.tat, this.keys.pause, this.keys.rate, this.keys.urgent, this.keys.hot, this.keys.held],
        [
          this.interval,
          this.options.windowMs,
          this.reserveShare,
          this.adaptive ? 1 : 0,
          this.adaptive?.quietMs ?? 0,
          this.adaptive?.raiseShare ?? 0,
          this.adaptive?.ttlMs ?? 0,
          LANE_ARG[this.lane],
          URGENT_MARK_MARGIN_MS,
          waited > 0 ? 1 : 0,
        ],
        admitReply,
      );
      if (wait <= 0) return admittedAt;
      if (this.options.maxWaitMs !== undefined && waited + wait > this.options.maxWaitMs) {
        throw new GateTimeoutError(this.identity, wait);
      }
      if (waited === 0) this.options.onWait?.(wait);
      // A little jitter so processes released together do not collide on the same slot; a long wait (a pause)
      // is looked at again every second, so a rate or pause that changed meanwhile applies at once.
      const delay =
        Math.min(wait, MAX_SLEEP_MS) + Math.floor(Math.random() * Math.min(20, Math.max(1, this.interval)));
      waited += delay;
      await sleep(delay);
    }
  }

  async pause(ms: number): Promise<void> {
    if (ms <= 0) return;
    await PAUSE.run(this.redis, [this.keys.pause], [Math.ceil(ms)], pauseReply);
  }

  /** A pause of the deferrable lane only (gate-acquire.lua): at least `ms`, a longer one already set stays. */
  async holdDeferrable(ms: number): Promise<void> {
    if (ms <= 0) return;
    await PAUSE.run(this.redis, [this.keys.held], [Math.ceil(ms)], pauseReply);
  }

  async refused(admittedAt: number, pauseMs: number, quota?: RateQuota): Promise<void> {
    if (!this.adaptive) return this.pause(pauseMs);
    const cut = await REFUSED.run(
      this.redis,
      [this.keys.tat, this.keys.pause, this.keys.rate],
      [
        Math.max(0, Math.ceil(pauseMs)),
        admittedAt,
        this.interval,
        this.options.windowMs,
        this.adaptive.cut,
        this.adaptive.floorShare,
        this.adaptive.minBurstMs,
        this.adaptive.ttlMs,
        quota ? 0 : 1,
        this.adaptive.cutIntervalMs,
      ],
      refusedReply,
    );
    if (quota) await this.quota(quota);
    if (cut === 'cut') this.options.onCut?.();
  }

  async quota(quota: RateQuota): Promise<void> {
    if (!this.adaptive || quota.limit <= 0) return;
    // The longest reset seen stands for an unstated window (the script keeps the same maximum in Redis).
    const windowMs = quota.windowMs ?? Math.max(1_000, Math.ceil(quota.resetMs / 1000) * 1000);
    const last = this.lastQuota;
    const now = Date.now();
    const same =
      last !== null &&
      last.limit === quota.limit &&
      last.windowMs >= windowMs &&
      now - last.at < QUOTA_REFRESH_MS;
    if (same) return;
    if (!same)
      this.lastQuota = { limit: quota.limit, windowMs: Math.max(windowMs, last?.windowMs ?? 0), at: now };
    await QUOTA.run(
      this.redis,
      [this.keys.rate],
      [
        quota.limit,
        quota.resetMs,
        quota.windowMs ?? 0,
        this.interval,
        this.adaptive.ttlMs,
        STATED_QUOTA_MARGIN,
      ],
      quotaReply,
    );
  }

  /** The rate in force now, per minute, and its burst in ms (for status pages and tests). */
  async current(): Promise<{ perMinute: number; burstMs: number; learnt: boolean }> {
    const [iv, tol] = await this.redis.hmget(this.keys.rate, 'iv', 'tol');
    const ceiling = { perMinute: 60_000 / this.interval, burstMs: this.options.windowMs, learnt: false };
    if (!this.adaptive || iv === null || tol === null) return ceiling;
    return {
      perMinute: 60_000 / Math.max(this.interval, Number(iv)),
      burstMs: Math.min(this.options.windowMs, Number(tol)),
      learnt: true,
    };
  }

  /** Everything stored about the learnt rate (see GateState); one read, no write. */
  async state(): Promise<GateState> {
    const [iv, tol, at, cut, hint, hwin] = await this.redis.hmget(
      this.keys.rate,
      'iv',
      'tol',
      'at',
      'cut',
      'hint',
      'hwin',
    );
    const ceilingPerMinute = 60_000 / this.interval;
    const iso = (ms: string | null | undefined) => (ms ? new Date(Number(ms)).toISOString() : null);
    if (!this.adaptive || iv === null || iv === undefined) {
      return {
        perMinute: ceilingPerMinute,
        ceilingPerMinute,
        burstMs: this.options.windowMs,
        learnt: false,
        changedAt: null,
        lastCut: null,
        statedQuota: null,
        keptUntil: null,
      };
    }
    const changedAt = iso(at);
    return {
      perMinute: 60_000 / Math.max(this.interval, Number(iv)),
      ceilingPerMinute,
      burstMs: Math.min(this.options.windowMs, Number(tol ?? this.options.windowMs)),
      learnt: true,
      changedAt,
      lastCut: cut ? { at: iso(cut)!, reason: CUT_REASON } : null,
      statedQuota: hint ? { perMinute: 60_000 / Number(hint), windowMs: Number(hwin ?? 0) } : null,
      // Every script that changes the rate sets `at` and the key's TTL together: the TTL runs from `at`.
      keptUntil: at ? new Date(Number(at) + this.adaptive.ttlMs).toISOString() : null,
    };
  }
}

/** A stable, non-reversible name for an API key, for use in Redis keys and metrics labels. */
export function identityOf(secret: string): string {
  return createHash('sha256').update(secret).digest('hex').slice(0, 16);
}
