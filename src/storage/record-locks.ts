import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RedisClient } from '../redis.js';
import type { Keys } from './keys.js';

/**
 * All-or-nothing locks on a set of CRM records, so that a webhook-driven update and a backfill batch never
 * interleave their read-compare-write on one record. The TTL bounds how long a killed worker's locks last.
 */

const ACQUIRE = `
for i, k in ipairs(KEYS) do
  if redis.call('EXISTS', k) == 1 then return 0 end
end
for i, k in ipairs(KEYS) do
  redis.call('SET', k, ARGV[1], 'PX', ARGV[2])
end
return 1
`;

const RELEASE = `
local n = 0
for i, k in ipairs(KEYS) do
  if redis.call('GET', k) == ARGV[1] then redis.call('DEL', k); n = n + 1 end
end
return n
`;

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
  while (Number(await redis.eval(ACQUIRE, sorted.length, ...sorted, token, ttl)) !== 1) {
    if (Date.now() - started > waitMs) throw new RecordLockTimeoutError(Date.now() - started);
    await sleep(delay + Math.floor(Math.random() * delay));
    delay = Math.min(delay * 2, 500);
  }
  return {
    release: async () => {
      if (sorted.length > 0) await redis.eval(RELEASE, sorted.length, ...sorted, token);
    },
  };
}
