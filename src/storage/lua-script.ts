import { createHash } from 'node:crypto';
import type { z } from 'zod';
import type { RedisClient } from '../redis.js';
import { loadScriptSource } from './lua-loader.js';

/**
 * The one way the connector runs Lua: a script from `src/storage/lua/` (lua-loader.ts), sent by its SHA1
 * (EVALSHA) and in full only when the server does not know it yet (NOSCRIPT: first use, after a restart or
 * SCRIPT FLUSH). On a Redis Cluster ioredis sends each call to the node owning its first key's slot, and every
 * script's keys share one hash tag (storage/keys.ts), so a node that has not seen the script gets it the same
 * way. Each reply is checked against a zod schema: a script's result is a boundary like any other.
 */
export class LuaScript {
  private readonly sha: string;

  constructor(
    readonly name: string,
    private readonly source: string,
  ) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /** `src/storage/lua/<name>.lua`, read once when the module that names it loads. */
  static load(name: string): LuaScript {
    return new LuaScript(name, loadScriptSource(name));
  }

  /**
   * `reply` is a schema built once, at module load, next to the script (`const fooReply = z.enum([...])`): one
   * built per call costs measurable CPU in a webhook storm (5-6% of the worker building zod 4 enums
   * and numbers). test/zod-schemas-hoisted.test.ts keeps it so.
   */
  async run<S extends z.ZodType>(
    redis: RedisClient,
    keys: readonly string[],
    args: readonly (string | number)[],
    reply: S,
  ): Promise<z.infer<S>> {
    let raw: unknown;
    try {
      raw = await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      raw = await redis.eval(this.source, keys.length, ...keys, ...args);
    }
    const parsed = reply.safeParse(raw);
    if (!parsed.success) throw new LuaReplyError(this.name, parsed.error.message);
    return parsed.data;
  }
}

export class LuaReplyError extends Error {
  readonly code = 'LUA_REPLY_UNEXPECTED';
  constructor(
    readonly script: string,
    detail: string,
  ) {
    super(`Lua script ${script} answered something unexpected: ${detail}`);
    this.name = 'LuaReplyError';
  }
}
