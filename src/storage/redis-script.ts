import { createHash } from 'node:crypto';
import type { RedisClient } from '../redis.js';

/**
 * A Lua script sent by its SHA1 (EVALSHA), and in full only when the server does not know it yet (NOSCRIPT:
 * first use, or after a restart or SCRIPT FLUSH). For scripts on a hot path, where sending the body with every
 * call is measurable.
 */
export class RedisScript {
  private readonly sha: string;

  constructor(private readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  async run(
    redis: RedisClient,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return redis.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}
