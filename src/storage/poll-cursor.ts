import { z } from 'zod';
import type { RedisClient } from '../redis.js';
import type { Keys } from './keys.js';
import { LuaScript } from './lua-script.js';

/** Where an installation's change poll stopped (a polled CRM's cursor), and when it first polled. */

/**
 * Where the change poll stopped; `since` is the time of the first poll, `polledAt` of the last pass that called
 * the CRM (epoch ms; absent on a cursor written before it was kept: as old as can be).
 */
export interface PollCursor {
  cursor: string;
  since: number;
  polledAt?: number;
}

const HSET_IF_INSTALLED = LuaScript.load('hset-if-installed');
const hsetIfInstalledReply = z.enum(['set', 'gone']);

export class PollCursors {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  async get(installationId: string): Promise<PollCursor | null> {
    const [cursor, since, polledAt] = await this.redis.hmget(
      this.keys.pollCursor(installationId),
      'cursor',
      'since',
      'polledAt',
    );
    if (!cursor || !since || !Number.isFinite(Number(since))) return null;
    const polled = Number(polledAt);
    return polledAt && Number.isFinite(polled)
      ? { cursor, since: Number(since), polledAt: polled }
      : { cursor, since: Number(since) };
  }

  /** Kept only while the installation exists (hset-if-installed.lua). */
  async set(installationId: string, cursor: PollCursor): Promise<void> {
    await HSET_IF_INSTALLED.run(
      this.redis,
      [this.keys.installation(installationId), this.keys.pollCursor(installationId)],
      [
        'cursor',
        cursor.cursor,
        'since',
        String(cursor.since),
        ...(cursor.polledAt === undefined ? [] : ['polledAt', String(cursor.polledAt)]),
      ],
      hsetIfInstalledReply,
    );
  }
}
