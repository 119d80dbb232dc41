import { z } from 'zod';
import type { RedisClient } from '../redis.js';
import type { Keys } from './keys.js';
import { LuaScript } from './lua-script.js';

/**
 * Where each installation's changes come from, as its change stream last said, beside whether a worker holds
 * the stream now (its lease, app/change-streams.ts). Kept in Redis, not in the holder's memory, because the
 * server showing the admin page, the `status` command and the poll deciding whether to call the CRM all run in
 * other processes than the worker holding the stream.
 */

/** Why a stream that runs leaves the changes to the poll; `ended`: no stream runs since the holder gave it back. */
export const STREAM_STATE_REASONS = ['unavailable', 'reconnecting', 'ended'] as const;
export type StreamStateReason = (typeof STREAM_STATE_REASONS)[number];

/** What a stream's holder records (the CRM contract's ChangeStreamState has this shape). */
export interface StreamStateInput {
  mode: 'stream' | 'poll';
  detail: string;
  reason?: StreamStateReason;
}

/** As stored: `since` when the changes began to come this way, `updated` the last word from the holder (ms). */
export interface StoredStreamState extends StreamStateInput {
  since: number;
  updated: number;
}

export interface StreamStateReading {
  /** Whether a worker holds the stream now (its lease is set). */
  held: boolean;
  state: StoredStreamState | null;
}

const WRITE = LuaScript.load('change-stream-state');
const writeReply = z.enum(['set', 'gone', 'lost']);

// Tolerant: a reason this release does not know (written by a newer one) reads as none.
const storedSchema = z.object({
  mode: z.enum(['stream', 'poll']),
  detail: z.string(),
  reason: z.enum(STREAM_STATE_REASONS).optional().catch(undefined),
  since: z.coerce.number(),
  updated: z.coerce.number(),
});

export class ChangeStreamStates {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  /**
   * Records `state` while the lease is the caller's (`token`); with `release`, gives the lease back in the
   * same step. 'lost': the lease is another's or lapsed, and nothing was written.
   */
  async write(
    installationId: string,
    token: string,
    state: StreamStateInput,
    options: { release?: boolean; now?: number } = {},
  ): Promise<'set' | 'gone' | 'lost'> {
    return WRITE.run(
      this.redis,
      [
        this.keys.installation(installationId),
        this.keys.changeStreamState(installationId),
        this.keys.changeStreamLease(installationId),
      ],
      [
        token,
        state.mode,
        state.detail,
        state.reason ?? '',
        options.now ?? Date.now(),
        options.release ? '1' : '0',
      ],
      writeReply,
    );
  }

  async read(installationId: string): Promise<StreamStateReading> {
    const [held, raw] = await Promise.all([
      this.redis.exists(this.keys.changeStreamLease(installationId)),
      this.redis.hgetall(this.keys.changeStreamState(installationId)),
    ]);
    const parsed = storedSchema.safeParse(raw);
    return { held: held === 1, state: parsed.success ? parsed.data : null };
  }

  /**
   * The stream is healthy: a worker holds it and it says it streams. Then the changes arrive by it, and a
   * scheduled poll has nothing to find (handlers/poll.ts).
   */
  async healthy(installationId: string): Promise<boolean> {
    return streamsNow(await this.read(installationId));
  }
}

/** The one rule for "changes arrive by the stream now": a worker holds it and it says it streams. */
export function streamsNow({ held, state }: StreamStateReading): boolean {
  return held && state?.mode === 'stream';
}
