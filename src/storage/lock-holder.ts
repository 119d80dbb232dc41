import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { RedisClient } from '../redis.js';
import { LuaScript } from './lua-script.js';

/**
 * A process that holds record locks, and says so once a second: a lock names its holder, and a contender takes
 * the locks of a holder that stopped saying so (a SIGKILLed worker) after HOLDER_ALIVE_MS, where a lock's lease
 * alone would keep them for up to LOCK_LEASE_MS (an event for a record a killed batch held would wait up to
 * 15 s). One beat per installation the process holds locks in, whatever their number.
 *
 * The holder's own view is the conservative one: it counts itself alive until HOLDER_ALIVE_MS after it *sent*
 * its last answered beat, which is before Redis's own time for it, less a margin. A gap between two beats past
 * that (a stalled event loop, Redis away) is a lapse: the locks taken before it are no longer trusted, even
 * once the beats resume, as a contender may have taken them meanwhile.
 */

const BEAT = LuaScript.load('lock-holder-beat');
const BEAT_REPLY = z.literal('alive');

/** How long a holder counts as alive after a beat. */
export const HOLDER_ALIVE_MS = 3_000;
/** How often it beats: two beats can miss before the holder counts as dead. */
export const HOLDER_BEAT_MS = 1_000;
/** How much sooner than Redis the holder itself stops trusting its locks. */
const HOLDER_MARGIN_MS = 500;
/** How long a holders hash outlives its last beat. */
export const HOLDERS_KEEP_MS = 3_600_000;
/** How long a dead holder's field is kept once the hash holds many. */
const DEAD_HOLDER_KEEP_MS = 60_000;

interface HashState {
  /** Lock sets held under this hash (an installation's holders hash). */
  sets: number;
  /** Local time until which this holder surely counts as alive in this hash. */
  aliveUntil: number;
  /** Gaps between beats past `aliveUntil` so far: a set taken before a gap is no longer trusted. */
  lapses: number;
}

export class LockHolder {
  readonly id = randomUUID();
  private readonly hashes = new Map<string, HashState>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly redis: RedisClient) {}

  /** The value a lock of this holder takes: its token, then the holder. */
  valueFor(token: string): string {
    return `${token}|${this.id}`;
  }

  /** The acquire script's holder arguments (locks-acquire.lua ARGV[3..5]). */
  acquireArgs(): (string | number)[] {
    return [this.id, HOLDER_ALIVE_MS, HOLDERS_KEEP_MS];
  }

  /** A lock set is about to be taken under `hash`: beats start (or go on) for it. */
  enter(hash: string): void {
    const state = this.hashes.get(hash);
    if (state) state.sets += 1;
    else this.hashes.set(hash, { sets: 1, aliveUntil: 0, lapses: 0 });
    if (!this.timer) {
      this.timer = setInterval(() => this.beat(), HOLDER_BEAT_MS);
      // A process with nothing else to do must not stay alive for its beats alone.
      this.timer.unref();
    }
  }

  /** A lock set under `hash` was released (or never taken). */
  leave(hash: string): void {
    const state = this.hashes.get(hash);
    if (!state) return;
    state.sets -= 1;
    if (state.sets <= 0) this.hashes.delete(hash);
    if (this.hashes.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /** Redis counted this holder alive from `sentAt` (a beat or an acquire sent then was answered). */
  alive(hash: string, sentAt: number): void {
    const state = this.hashes.get(hash);
    if (!state) return;
    if (state.aliveUntil !== 0 && sentAt >= state.aliveUntil) state.lapses += 1;
    state.aliveUntil = Math.max(state.aliveUntil, sentAt + HOLDER_ALIVE_MS - HOLDER_MARGIN_MS);
  }

  /** Lapses so far under `hash`: a lock set remembers the count it was taken at. */
  lapsesOf(hash: string): number {
    return this.hashes.get(hash)?.lapses ?? 0;
  }

  /** Whether a set taken at `lapses` is still surely this holder's, as far as its liveness goes. */
  trusts(hash: string, lapses: number, now = Date.now()): boolean {
    const state = this.hashes.get(hash);
    if (!state) return false;
    if (now >= state.aliveUntil) {
      // Sticky: the beat that ends the gap must not make the set trusted again.
      if (state.lapses === lapses) state.lapses += 1;
      return false;
    }
    return state.lapses === lapses;
  }

  private beat(): void {
    for (const hash of this.hashes.keys()) {
      const sentAt = Date.now();
      BEAT.run(
        this.redis,
        [hash],
        [this.id, HOLDER_ALIVE_MS, HOLDERS_KEEP_MS, DEAD_HOLDER_KEEP_MS],
        BEAT_REPLY,
      )
        .then(() => this.alive(hash, sentAt))
        // Missed: the next beat tries again; two misses and this holder's sets are no longer trusted.
        .catch(() => {});
    }
  }
}

/** One holder per Redis client (per process in production: a worker has one client for its jobs). */
const holders = new WeakMap<RedisClient, LockHolder>();

export function lockHolderFor(redis: RedisClient): LockHolder {
  let holder = holders.get(redis);
  if (!holder) {
    holder = new LockHolder(redis);
    holders.set(redis, holder);
  }
  return holder;
}
