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
 * An adaptive gate (`adaptive`, the report service's keys: the service publishes no limits) learns the key's
 * rate and keeps it in Redis, next to the arrival time, shared by every process; requests go evenly spaced at
 * it, never faster than `max` per `windowMs` (the operator's ceiling when one is set, `UNCAPPED_PER_MINUTE`
 * otherwise).
 * The curve is in lib/learnt-rate.lua:
 *
 * - a key never seen starts at a safe rate (`startPerMinute`) and doubles it every `doublingMs` while no 429
 *   comes, never above twice the rate measured sent or a rate the key already took (so an idle key ramps up
 *   again rather than sending a rate it has not shown it accepts);
 * - a 429 pauses everyone for its Retry-After and cuts the rate (`cut`, once for every request admitted before
 *   the cut, at most once every `cutIntervalMs`: a burst of 429s is one signal; not for a Retry-After longer
 *   than `longPauseMs`, which is the key refused for a while, not its rate): `limitMargin` of the rate
 *   it came at is taken as the key's limit, the rate climbs back to it within `recoverMs`, holds there, and then
 *   probes above it, slowly at first (`probeShare` after `probeMs`) and faster while no 429 comes (cubic);
 * - rate-limit headers, when the service sends them, set the rate to their limit directly (never above the
 *   ceiling), evenly spaced; a 429 that states its quota pauses everyone until the window resets (Retry-After,
 *   or the stated reset) without a cut, since the rate is known.
 *
 * What was kept by the code before the learner (a rate cut below the old default ceiling) is read: the slow
 * start begins from it.
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
  /** The rate a key starts at while nothing is learnt (never above the ceiling). */
  startPerMinute?: number;
  /** Before the first 429 the rate doubles this often. */
  doublingMs?: number;
  /** Factor of the key's limit (as a 429 showed it) the rate is cut to. */
  cut?: number;
  /** Share of the rate a 429 came at that is taken as the key's limit. */
  limitMargin?: number;
  /** After a cut, the rate is back at the limit this long later. */
  recoverMs?: number;
  /** Past the recovery, the rate is `probeShare` above the limit after `probeMs`, and grows as a cube. */
  probeMs?: number;
  probeShare?: number;
  /** The rate never goes below this (nor above the ceiling). */
  floorPerMinute?: number;
  /**
   * Least time between two cuts. A service that refuses everything for a while (Retry-After short or absent)
   * is not telling the rate apart at every pause: without this a two-second storm of 429s cut eight times.
   */
  cutIntervalMs?: number;
  /** How long the learnt rate is kept in Redis after its last use; then a key starts again. */
  ttlMs?: number;
  /**
   * A 429 whose Retry-After is longer than this pauses without a cut: the service refuses the key for a while
   * (a spent quota, a long window), which says nothing of the rate it takes, and a cut from a slow start would
   * leave the key crawling for minutes after the pause.
   */
  longPauseMs?: number;
}

export const ADAPTIVE_DEFAULTS: Required<AdaptiveRateOptions> = {
  startPerMinute: 120,
  doublingMs: 500,
  cut: 0.85,
  limitMargin: 0.9,
  recoverMs: 6_000,
  probeMs: 30_000,
  probeShare: 0.05,
  floorPerMinute: 30,
  cutIntervalMs: 2_000,
  ttlMs: 7 * 24 * 60 * 60_000,
  longPauseMs: 5_000,
};

/** The `max` per minute of a gate without a ceiling (REPORTS_RATE_PER_MINUTE not set): none in practice. */
export const UNCAPPED_PER_MINUTE = 60_000;

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
  /** The operator's ceiling (`max` per `windowMs`), per minute; null when none is set. */
  ceilingPerMinute: number | null;
  /** The burst allowed on top of the steady rate, in ms of it. */
  burstMs: number;
  /** False when nothing is stored: the key was not used in the last `ttlMs`. */
  learnt: boolean;
  /**
   * How the rate moves now: `rising` (no 429 yet: doubling while requests come), `recovering` (back towards the
   * limit a 429 showed), `probing` (past it, slowly); `stated` when the service's headers give it.
   */
  phase: 'rising' | 'recovering' | 'probing' | 'stated' | null;
  /** The key's limit as the last 429 showed it, per minute; null before any. */
  limitPerMinute: number | null;
  /** The rate measured sent lately, per minute. */
  sentPerMinute: number | null;
  /** When the stored rate last changed (the start, a cut, a stated quota). */
  changedAt: string | null;
  /**
   * The last cut. Only a 429 without a stated quota cuts (REFUSED), so the reason is known without being
   * stored; a 429 that states its quota pauses without a cut and shows as `statedQuota` instead.
   */
  lastCut: { at: string; reason: string } | null;
  /** The rate the service's rate-limit headers stated, when it sent any: the learnt rate stops there. */
  statedQuota: { perMinute: number; windowMs: number } | null;
  /** When what is learnt lapses if the key is not used meanwhile. */
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
  /** The learner's parameters (also for a gate without `adaptive`: the scripts take them unused). */
  private readonly learner: Required<AdaptiveRateOptions>;
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
    this.learner = this.adaptive ?? ADAPTIVE_DEFAULTS;
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
          this.learner.startPerMinute / 60,
          this.learner.floorPerMinute / 60,
          this.adaptive?.ttlMs ?? 0,
          LANE_ARG[this.lane],
          URGENT_MARK_MARGIN_MS,
          waited > 0 ? 1 : 0,
          this.learner.doublingMs,
          this.learner.recoverMs,
          this.learner.cut,
          this.learner.limitMargin,
          this.learner.probeMs,
          this.learner.probeShare,
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
        this.learner.startPerMinute / 60,
        this.learner.cut,
        this.learner.floorPerMinute / 60,
        this.learner.limitMargin,
        this.adaptive.ttlMs,
        quota || pauseMs > this.adaptive.longPauseMs ? 0 : 1,
        this.adaptive.cutIntervalMs,
        this.learner.doublingMs,
        this.learner.recoverMs,
        this.learner.probeMs,
        this.learner.probeShare,
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
    if (!this.adaptive) return ceiling;
    if (iv === null || tol === null) {
      return {
        perMinute: Math.min(ceiling.perMinute, this.adaptive.startPerMinute),
        burstMs: 0,
        learnt: false,
      };
    }
    return {
      perMinute: 60_000 / Math.max(this.interval, Number(iv)),
      burstMs: Math.min(this.options.windowMs, Number(tol)),
      learnt: true,
    };
  }

  /** Everything stored about the learnt rate (see GateState); one read, no write. */
  async state(): Promise<GateState> {
    const [[iv, tol, at, cut, hint, hwin, wmax, ss, mr, k0], ttl] = await Promise.all([
      this.redis.hmget(this.keys.rate, 'iv', 'tol', 'at', 'cut', 'hint', 'hwin', 'wmax', 'ss', 'mr', 'k0'),
      this.redis.pttl(this.keys.rate),
    ]);
    const ceilingPerMinute = 60_000 / this.interval;
    const ceiling =
      this.options.max * (60_000 / this.options.windowMs) >= UNCAPPED_PER_MINUTE ? null : ceilingPerMinute;
    const iso = (ms: string | null | undefined) => (ms ? new Date(Number(ms)).toISOString() : null);
    if (!this.adaptive || iv === null || iv === undefined) {
      return {
        perMinute: this.adaptive
          ? Math.min(ceilingPerMinute, ADAPTIVE_DEFAULTS.startPerMinute)
          : ceilingPerMinute,
        ceilingPerMinute: ceiling,
        burstMs: this.adaptive ? 0 : this.options.windowMs,
        learnt: false,
        phase: null,
        limitPerMinute: null,
        sentPerMinute: null,
        changedAt: null,
        lastCut: null,
        statedQuota: null,
        keptUntil: null,
      };
    }
    // k0 is the last cut's time once there was one (lib/learnt-rate.lua).
    const sinceCut = k0 ? Date.now() - Number(k0) : null;
    const phase: GateState['phase'] = hint
      ? 'stated'
      : ss || !wmax
        ? 'rising'
        : sinceCut !== null && sinceCut < this.adaptive.recoverMs
          ? 'recovering'
          : 'probing';
    return {
      perMinute: 60_000 / Math.max(this.interval, Number(iv)),
      ceilingPerMinute: ceiling,
      burstMs: Math.min(this.options.windowMs, Number(tol ?? this.options.windowMs)),
      learnt: true,
      phase,
      limitPerMinute: wmax ? Number(wmax) * 60 : null,
      sentPerMinute: mr ? Number(mr) * 60 : null,
      changedAt: iso(at),
      lastCut: cut ? { at: iso(cut)!, reason: CUT_REASON } : null,
      statedQuota: hint ? { perMinute: 60_000 / Number(hint), windowMs: Number(hwin ?? 0) } : null,
      keptUntil: ttl > 0 ? new Date(Date.now() + ttl).toISOString() : null,
    };
  }
}

/** A stable, non-reversible name for an API key, for use in Redis keys and metrics labels. */
export function identityOf(secret: string): string {
  return createHash('sha256').update(secret).digest('hex').slice(0, 16);
}
