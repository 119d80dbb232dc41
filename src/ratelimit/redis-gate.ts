import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RequestGate } from '../crm/request-gate.js';
import { gateKeys } from '../pipeline/keys.js';
import type { RedisClient } from '../redis.js';

/**
 * A rate gate for one upstream identity, shared by every process through Redis. It uses GCRA (one key holding
 * the theoretical arrival time), which allows a burst of `max` and then spaces requests evenly, plus a pause
 * key that a 429 sets so that everyone sharing the identity holds off, not just the caller that was refused.
 * Both decisions run in one Lua script with Redis's clock, so process clocks never disagree.
 */

const ACQUIRE = `
local pause = redis.call('PTTL', KEYS[2])
if pause > 0 then return pause end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local interval = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local nextTat = tat + interval
local allowAt = nextTat - window + tonumber(ARGV[3])
if allowAt > now then return allowAt - now end
redis.call('SET', KEYS[1], nextTat, 'PX', window + interval)
return 0
`;

const PAUSE = `
local current = redis.call('PTTL', KEYS[1])
if current < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], '1', 'PX', ARGV[1]) end
return 0
`;

export interface RateGateOptions {
  /** Requests allowed per window. */
  max: number;
  windowMs: number;
  /** Reported once per wait, for metrics. */
  onWait?: (ms: number) => void;
  /** A request that would wait longer than this gives up with `GateTimeoutError`. */
  maxWaitMs?: number;
  /**
   * Milliseconds of the burst this gate's callers leave to callers without a reserve on the same identity. A
   * deferrable lane (backfills, sweeps, a storm's repeats) reserves part of the burst, so urgent requests
   * still pass at once while it is busy; both lanes get the full steady rate when the other is idle.
   */
  reserveMs?: number;
}

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

export class RedisRateGate implements RequestGate {
  private readonly interval: number;
  private readonly keys: { tat: string; pause: string };

  constructor(
    private readonly redis: RedisClient,
    /** Redis key stem; never a secret (hash API keys with `identityOf`). */
    readonly identity: string,
    private readonly options: RateGateOptions,
  ) {
    this.interval = Math.max(1, Math.floor(options.windowMs / options.max));
    this.keys = gateKeys(identity);
  }

  async acquire(): Promise<void> {
    let waited = 0;
    for (;;) {
      const wait = Number(
        await this.redis.eval(
          ACQUIRE,
          2,
          this.keys.tat,
          this.keys.pause,
          this.interval,
          this.options.windowMs,
          Math.min(this.options.reserveMs ?? 0, this.options.windowMs),
        ),
      );
      if (wait <= 0) return;
      if (this.options.maxWaitMs !== undefined && waited + wait > this.options.maxWaitMs) {
        throw new GateTimeoutError(this.identity, wait);
      }
      this.options.onWait?.(wait);
      // A little jitter so processes released together do not collide on the same slot.
      const delay = wait + Math.floor(Math.random() * Math.min(20, this.interval));
      waited += delay;
      await sleep(delay);
    }
  }

  async pause(ms: number): Promise<void> {
    if (ms <= 0) return;
    await this.redis.eval(PAUSE, 1, this.keys.pause, Math.ceil(ms));
  }
}

/** A stable, non-reversible name for an API key, for use in Redis keys and metrics labels. */
export function identityOf(secret: string): string {
  return createHash('sha256').update(secret).digest('hex').slice(0, 16);
}
