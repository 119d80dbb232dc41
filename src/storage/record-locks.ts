import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { RedisClient } from '../redis.js';
import type { Keys } from './keys.js';
import { LuaScript } from './lua-script.js';

/**
 * All-or-nothing locks on a set of CRM records, so that a webhook-driven update and a backfill batch never
 * interleave their read-compare-write on one record. The TTL bounds how long a killed worker's locks last.
 */

const ACQUIRE = LuaScript.load('locks-acquire');
const RELEASE = LuaScript.load('locks-release');

export class RecordLockTimeoutError extends Error {
  readonly code = 'RECORD_LOCK_TIMEOUT';
  constructor(readonly waitedMs: number) {
    super(`records are being written by another job; gave up after ${waitedMs} ms`);
    this.name = 'RecordLockTimeoutError';
  }
}

export interface HeldLocks {
  release(): Promise<void>;
}

/** Locks records of one installation (the pipeline's entry point; `lockRecords` takes the keys themselves). */
export function lockInstallationRecords(
  redis: RedisClient,
  keys: Keys,
  installationId: string,
  recordIds: string[],
  options: { ttlMs?: number; waitMs?: number } = {},
): Promise<HeldLocks> {
  return lockRecords(
    redis,
    recordIds.map((id) => keys.recordLock(installationId, id)),
    options,
  );
}

export async function lockRecords(
  redis: RedisClient,
  keys: string[],
  options: { ttlMs?: number; waitMs?: number } = {},
): Promise<HeldLocks> {
  const ttl = options.ttlMs ?? 60_000;
  const waitMs = options.waitMs ?? 30_000;
  const token = randomUUID();
  const sorted = [...new Set(keys)].sort();
  const started = Date.now();
  let delay = 20;
  while ((await ACQUIRE.run(redis, sorted, [token, ttl], z.enum(['acquired', 'busy']))) !== 'acquired') {
    if (Date.now() - started > waitMs) throw new RecordLockTimeoutError(Date.now() - started);
    await sleep(delay + Math.floor(Math.random() * delay));
    delay = Math.min(delay * 2, 500);
  }
  return {
    release: async () => {
      if (sorted.length > 0) await RELEASE.run(redis, sorted, [token], z.number());
    },
  };
}
