import { z } from 'zod';
import type { RedisClient } from '../redis.js';
import type { Keys } from './keys.js';
import { LuaScript } from './lua-script.js';

/** Where an installation's change poll stopped (a polled CRM's cursor), and when it first polled. */

/** Where the change poll stopped; `since` is the time of the first poll (epoch ms). */
export interface PollCursor {
  cursor: string;
  since: number;
}

const HSET_IF_INSTALLED = LuaScript.load('hset-if-installed');
const hsetIfInstalledReply = z.enum(['set', 'gone']);

export class PollCursors {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  async get(installationId: string): Promise<PollCursor | null> {
    const [cursor, since] = await this.redis.hmget(this.keys.pollCursor(installationId), 'cursor', 'since');
    if (!cursor || !since || !Number.isFinite(Number(since))) return null;
    return { cursor, since: Number(since) };
  }

  /** Kept only while the installation exists (hset-if-installed.lua). */
  async set(installationId: string, cursor: PollCursor): Promise<void> {
    await HSET_IF_INSTALLED.run(
      this.redis,
      [this.keys.installation(installationId), this.keys.pollCursor(installationId)],
      ['cursor', cursor.cursor, 'since', String(cursor.since)],
      hsetIfInstalledReply,
    );
  }
}
