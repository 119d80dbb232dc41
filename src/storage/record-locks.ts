import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { RedisClient } from '../redis.js';
import type { Keys } from './keys.js';
import { lockHolderFor } from './lock-holder.js';
import { LuaScript } from './lua-script.js';

/**
 * All-or-nothing locks on a set of CRM records, so that a webhook-driven update and a backfill batch never
 * interleave their read-compare-write on one record. Each lock is a lease: short, and renewed by its holder
 * while it lives, so a batch may hold its records for as long as its reads take, while a killed worker's
 * records are free again within one lease (an event for them lands within the lease plus a few
 * seconds, where a fixed 60 s TTL would make it wait a minute). An installation's locks also name their holder
 * process, which beats once a second (lock-holder.ts): a killed worker's locks are taken within
 * HOLDER_ALIVE_MS of its last beat, not its locks' lease.
 */

const ACQUIRE = LuaScript.load('locks-acquire');
const acquireReply = z.enum(['acquired', 'busy']);
const RELEASE = LuaScript.load('locks-release');
const releaseReply = z.number();
const RENEW = LuaScript.load('locks-renew');
const renewReply = z.number();

/** The longest a lock outlives its holder. */
export const LOCK_LEASE_MS = 15_000;
/** Renewals per lease: a renewal can miss twice (a slow Redis, a busy event loop) before the lease lapses. */
const RENEWALS_PER_LEASE = 3;

export class RecordLockTimeoutError extends Error {
  readonly code = 'RECORD_LOCK_TIMEOUT';
  constructor(readonly waitedMs: number) {
    super(`records are being written by another job; gave up after ${waitedMs} ms`);
    this.name = 'RecordLockTimeoutError';
  }
}

/**
 * The holder's leases lapsed before its write (it stalled past a lease: a blocked event loop, Redis away for
 * longer than two renewals), so another holder may have written the records since: what it would write was
 * compared against a state that may be gone. Its job runs again and compares anew.
 */
export class RecordLocksLostError extends Error {
  readonly code = 'RECORD_LOCKS_LOST';
  constructor(readonly unwritten: number) {
    super(`the record locks lapsed before ${unwritten} records were written; the job runs again`);
    this.name = 'RecordLocksLostError';
  }
}

export interface HeldLocks {
  release(): Promise<void>;
  /**
   * False once a renewal found a lease lapsed, or the holder's beats did (it stalled past them): another holder
   * may have them.
   */
  held(): boolean;
}

export interface LockOptions {
  /** The lease (capped at LOCK_LEASE_MS; tests shorten it): how long the locks outlive a holder that died. */
  ttlMs?: number;
  /** How long to wait for locks another holder has before giving up (RecordLockTimeoutError). */
  waitMs?: number;
  /**
   * The lock holders hash (same hash tag as the locks; lock-holder.ts): the locks name this process, which
   * beats while it holds them, and a contender takes the locks of a holder that stopped beating.
   */
  holders?: string;
}

/** Locks records of one installation (the pipeline's entry point; `lockRecords` takes the keys themselves). */
export function lockInstallationRecords(
  redis: RedisClient,
  keys: Keys,
  installationId: string,
  recordIds: string[],
  options: LockOptions = {},
): Promise<HeldLocks> {
  return lockRecords(
    redis,
    recordIds.map((id) => keys.recordLock(installationId, id)),
    { holders: keys.recordLockHolders(installationId), ...options },
  );
}

/** The record locks of every installation as the pipeline takes them: one store, built in app/stores.ts. */
export class RecordLocks {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  /** Locks records of one installation, named after this process (lockInstallationRecords). */
  lock(installationId: string, recordIds: string[], options: LockOptions = {}): Promise<HeldLocks> {
    return lockInstallationRecords(this.redis, this.keys, installationId, recordIds, options);
  }
}

export async function lockRecords(
  redis: RedisClient,
  keys: string[],
  options: LockOptions = {},
): Promise<HeldLocks> {
  const lease = Math.min(options.ttlMs ?? LOCK_LEASE_MS, LOCK_LEASE_MS);
  const waitMs = options.waitMs ?? 30_000;
  const sorted = [...new Set(keys)].sort();
  // The locks name this process when the caller gives the holders hash (and there is a lock to name).
  const named =
    options.holders && sorted.length > 0 ? { hash: options.holders, holder: lockHolderFor(redis) } : null;
  const token = named ? named.holder.valueFor(randomUUID()) : randomUUID();
  const acquireKeys = named ? [...sorted, named.hash] : sorted;
  const acquireArgs = named ? [token, lease, ...named.holder.acquireArgs()] : [token, lease];
  named?.holder.enter(named.hash);
  const started = Date.now();
  let delay = 20;
  let sentAt = Date.now();
  try {
    while ((await ACQUIRE.run(redis, acquireKeys, acquireArgs, acquireReply)) !== 'acquired') {
      if (Date.now() - started > waitMs) throw new RecordLockTimeoutError(Date.now() - started);
      await sleep(delay + Math.floor(Math.random() * delay));
      delay = Math.min(delay * 2, 500);
      sentAt = Date.now();
    }
  } catch (err) {
    named?.holder.leave(named.hash);
    throw err;
  }
  named?.holder.alive(named.hash, sentAt);
  const lapses = named ? named.holder.lapsesOf(named.hash) : 0;
  let held = true;
  let released = false;
  let renewing: Promise<void> = Promise.resolve();
  const timer =
    sorted.length === 0
      ? undefined
      : setInterval(() => {
          renewing = (async () => {
            try {
              const renewed = await RENEW.run(redis, sorted, [token, lease], renewReply);
              if (renewed < sorted.length && !released) {
                held = false;
                clearInterval(timer);
              }
            } catch {
              // Redis away for a moment: the next renewal tries again, and the lease covers two misses.
            }
          })();
        }, lease / RENEWALS_PER_LEASE);
  // A holder that has nothing else to do must not stay alive for its renewals alone.
  timer?.unref();
  return {
    held: () => {
      if (held && named && !named.holder.trusts(named.hash, lapses)) held = false;
      return held;
    },
    release: async () => {
      released = true;
      clearInterval(timer);
      await renewing;
      try {
        if (sorted.length > 0) await RELEASE.run(redis, sorted, [token], releaseReply);
      } finally {
        named?.holder.leave(named.hash);
      }
    },
  };
}
