import { z } from 'zod';
import type { RedisClient } from '../redis.js';
import type { Keys } from './keys.js';
import { LuaScript } from './lua-script.js';

/**
 * Which installations have a record on a slug (the fan-out of score.changed), for the whole deployment:
 * SLUG_FANOUT_SHARDS linear-hash maps (linear-hash.ts), each under a hash tag of its own, field the slug's
 * digest (slug-digest.ts), value the numbers of the installations (`Keys.slugInstallationNumbers`): a few bytes
 * per slug and a byte or two per installation, where a set per slug would cost a key, its dict and a hash-table
 * entry (about 240 bytes for a report one record links to).
 *
 * Two slugs with the same digest (about one pair among 65,000 slugs) share their entry: a fan-out then looks at
 * an installation that has no record on the slug and finds none (SlugIndex.recordsForSlug checks the records'
 * own slug), as it does for an entry left after the last record moved away.
 */

/** Fixed, so that a slug's shard never moves; 16 tags spread over the masters of a cluster. */
export const SLUG_FANOUT_SHARDS = 16;

function shardOf(digest: string): number {
  return Number(digest) % SLUG_FANOUT_SHARDS;
}

const ADD = LuaScript.load('fanout-add');
const addReply = z.literal('added');
const REMOVE = LuaScript.load('fanout-remove');
const removeReply = z.literal('removed');
const GET = LuaScript.load('fanout-get');
const getReply = z.string().nullable();
const NUMBER = LuaScript.load('fanout-number');
const numberReply = z.number();
const FORGET_NUMBER = LuaScript.load('fanout-forget-number');
const forgetNumberReply = z.enum(['forgotten', 'unknown']);

export class SlugFanout {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  async add(installationId: string, digests: readonly string[]): Promise<void> {
    if (digests.length === 0) return;
    const n = await this.numberOf(installationId);
    await this.eachShard(digests, (stem, some) => ADD.run(this.redis, [stem], [n, ...some], addReply));
  }

  async remove(installationId: string, digests: readonly string[]): Promise<void> {
    if (digests.length === 0) return;
    const n = await this.numberOf(installationId);
    await this.eachShard(digests, (stem, some) => REMOVE.run(this.redis, [stem], [n, ...some], removeReply));
  }

  /** The installations listed for the slug's digest (see above: possibly one with no record on it). */
  async installations(digest: string): Promise<string[]> {
    const stem = this.keys.slugInstallationsShard(shardOf(digest));
    const raw = await GET.run(this.redis, [stem], [digest], getReply);
    if (!raw) return [];
    const ids = await this.redis.hmget(
      this.keys.slugInstallationNumbers(),
      ...raw.split(' ').map((n) => `n:${n}`),
    );
    return ids.filter((id): id is string => id !== null);
  }

  /** A removed installation's number, out of the numbers hash (after `remove` took it out of the shards). */
  async forgetInstallation(installationId: string): Promise<void> {
    await FORGET_NUMBER.run(
      this.redis,
      [this.keys.slugInstallationNumbers()],
      [installationId],
      forgetNumberReply,
    );
  }

  /**
   * Asked of Redis each time, not kept in the process: a removed installation installed again gets a new
   * number, which another process's copy of the old one would miss.
   */
  private async numberOf(installationId: string): Promise<string> {
    return String(
      await NUMBER.run(this.redis, [this.keys.slugInstallationNumbers()], [installationId], numberReply),
    );
  }

  private async eachShard(
    digests: readonly string[],
    run: (stem: string, digests: string[]) => Promise<unknown>,
  ): Promise<void> {
    const byShard = new Map<number, string[]>();
    for (const d of new Set(digests)) {
      const list = byShard.get(shardOf(d)) ?? [];
      list.push(d);
      byShard.set(shardOf(d), list);
    }
    // One script per shard, at most 500 digests each, so that no call holds Redis long.
    const calls: Promise<unknown>[] = [];
    for (const [shard, list] of byShard) {
      for (let i = 0; i < list.length; i += 500) {
        calls.push(run(this.keys.slugInstallationsShard(shard), list.slice(i, i + 500)));
      }
    }
    await Promise.all(calls);
  }
}
