import { randomUUID } from 'node:crypto';
import { type LocalSystem, type LocalSystemOptions, startLocalSystem } from '../../local/system.js';
import { deleteKeysWithPrefix } from '../../src/redis.js';

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
