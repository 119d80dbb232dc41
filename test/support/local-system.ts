import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { type LocalSystem, type LocalSystemOptions, startLocalSystem } from '../../local/system.js';
import { deleteKeysWithPrefix } from '../../src/redis.js';
import { runEnded } from './system-state.js';

/**
 * The one fixture for a system under test: a local system under a fresh Redis prefix (the fixture owns it:
 * read it back from `system.ctx.config.redisPrefix`), and the clean-up that deletes every key it made.
 */
export async function startTestSystem(
  options: Omit<LocalSystemOptions, 'prefix'> = {},
): Promise<LocalSystem> {
  return startLocalSystem({ prefix: `rc-test-${randomUUID().slice(0, 8)}`, workers: 1, ...options });
}

/** Closes the system and deletes its keys; safe to call when the start failed. */
export async function stopTestSystem(system: LocalSystem | undefined): Promise<void> {
  if (!system) return;
  await system.close();
  await deleteKeysWithPrefix(system.ctx.config, system.ctx.config.redisPrefix);
}

export interface SharedTestSystem {
  /** Waits for the first sync run to end before the file's tests start. */
  firstRunEnded?: boolean;
  /** Runs once the system is up (and its first run ended, when asked), before the first test. */
  prepare?: (system: LocalSystem) => Promise<unknown>;
  /** The start's budget: a large seed or two CRMs want more than the default. */
  timeoutMs?: number;
}

/**
 * One system for the tests of the enclosing file or `describe`: started in `beforeAll`, stopped (keys deleted) in
 * `afterAll`. What it returns stands for that system: the tests read it as they would the system itself, and
 * reading it before `beforeAll` ran throws rather than giving `undefined`.
 */
export function suiteSystem(
  options: Omit<LocalSystemOptions, 'prefix'> = {},
  { firstRunEnded = false, prepare, timeoutMs = 120_000 }: SharedTestSystem = {},
): LocalSystem {
  let started: LocalSystem | undefined;
  beforeAll(async () => {
    started = await startTestSystem(options);
    if (firstRunEnded) await runEnded(started);
    await prepare?.(started);
  }, timeoutMs);
  afterAll(async () => {
    await stopTestSystem(started);
    started = undefined;
  });
  const current = (): LocalSystem => {
    if (!started)
      throw new Error('the test system is read outside its tests (before beforeAll or after afterAll)');
    return started;
  };
  return new Proxy({} as LocalSystem, {
    get: (_target, prop) => Reflect.get(current(), prop),
    has: (_target, prop) => Reflect.has(current(), prop),
    ownKeys: () => Reflect.ownKeys(current()),
    getOwnPropertyDescriptor: (_target, prop) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(current(), prop);
      return descriptor ? { ...descriptor, configurable: true } : undefined;
    },
  });
}

/** The system's installation as an OAuth install from a portal or org nobody let in yet: no approval, pending. */
export async function awaitingApproval(system: LocalSystem): Promise<void> {
  const { installations, redis } = system.ctx;
  await redis.hdel(installations.keys.installation(system.installationId), 'approvedBy', 'approvedAt');
  await installations.setStatus(system.installationId, 'pending');
}
