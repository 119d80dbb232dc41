import { createHash } from 'node:crypto';
import type { RedisClient } from '../redis.js';
import type { Keys } from './keys.js';
import { LINEAR_HASH_LUA } from './linear-hash.js';
import { RedisScript } from './redis-script.js';

/**
 * Which installations have a record on a slug (the fan-out of score.changed), for the whole deployment. It was
 * one set per slug: a key, its dict and a hash-table entry per slug, about 240 bytes for a report one record
 * links to. Now it is SHARDS linear-hash maps (linear-hash.ts), each under a hash tag of its own, field the
 * slug's digest, value the numbers of the installations (`Keys.slugInstallationNumbers`): a few bytes more than
 * the digest and a byte or two per installation.
 *
 * The field is a 31-bit digest of the slug, not the slug, written as a decimal number: a compact bucket keeps a
 * field that reads as an integer in 4 bytes, where the 8 hex digits it was took 8. Two slugs with the same
 * digest (about one pair among 65,000 slugs) share their entry: a fan-out then looks at an installation that has
 * no record on the slug and finds none (LinkIndex.recordsForSlug checks the records' own slug), which an entry
 * left after the last record moved away did already.
 */

/** Fixed, so that a slug's shard never moves; 16 tags spread over the masters of a cluster. */
export const SLUG_FANOUT_SHARDS = 16;

/**
 * The slug's digest: the first 31 bits of SHA-1 over its stored (escaped) form, in decimal. The same in Lua
 * (`SLUG_DIGEST_LUA`, used by link-index.ts) and here.
 */
export function slugDigest(storedSlug: string): string {
  return String(createHash('sha1').update(storedSlug).digest().readUInt32BE(0) >>> 1);
}

export const SLUG_DIGEST_LUA = `
local function slug_digest(slug)
  return string.format('%d', math.floor(tonumber(string.sub(redis.sha1hex(slug), 1, 8), 16) / 2))
end
`;

function shardOf(digest: string): number {
  return Number(digest) % SLUG_FANOUT_SHARDS;
}

/** KEYS[1] the shard's stem; ARGV installation number, then digests: adds the installation to each. */
const ADD = new RedisScript(`${LINEAR_HASH_LUA}
local M = lh_open(KEYS[1])
local id = ARGV[1]
for i = 2, #ARGV do
  local v = lh_get(M, ARGV[i])
  if not v then
    lh_set(M, ARGV[i], id)
  elseif not string.find(' ' .. v .. ' ', ' ' .. id .. ' ', 1, true) then
    lh_set(M, ARGV[i], v .. ' ' .. id)
  end
end
lh_close(M)
return 1
`);

/** KEYS[1] the shard's stem; ARGV installation number, then digests: takes the installation out of each. */
const REMOVE = new RedisScript(`${LINEAR_HASH_LUA}
local M = lh_open(KEYS[1])
local id = ARGV[1]
for i = 2, #ARGV do
  local v = lh_get(M, ARGV[i])
  if v then
    local kept = {}
    for member in string.gmatch(v, '%S+') do
      if member ~= id then kept[#kept + 1] = member end
    end
    if #kept == 0 then lh_del(M, ARGV[i]) else lh_set(M, ARGV[i], table.concat(kept, ' ')) end
  end
end
lh_close(M)
return 1
`);

/** KEYS[1] the shard's stem; ARGV the digest. */
const GET = new RedisScript(`${LINEAR_HASH_LUA}
return lh_get(lh_open(KEYS[1]), ARGV[1])
`);

/** KEYS[1] the numbers hash; ARGV the installation id. Its number, given now if it had none. */
const NUMBER = new RedisScript(`
local n = redis.call('HGET', KEYS[1], 'i:' .. ARGV[1])
if n then return tonumber(n) end
n = redis.call('HINCRBY', KEYS[1], '#', 1)
redis.call('HSET', KEYS[1], 'i:' .. ARGV[1], n, 'n:' .. n, ARGV[1])
return n
`);

/**
 * KEYS[1] the numbers hash; ARGV the installation id. Deletes its number (both directions); `#` keeps counting,
 * so the number is never given again and a shard entry a late batch left with it names nobody.
 */
const FORGET_NUMBER = new RedisScript(`
local n = redis.call('HGET', KEYS[1], 'i:' .. ARGV[1])
if not n then return 0 end
redis.call('HDEL', KEYS[1], 'i:' .. ARGV[1], 'n:' .. n)
return 1
`);

export class SlugFanout {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  async add(installationId: string, digests: readonly string[]): Promise<void> {
    if (digests.length === 0) return;
    const n = await this.numberOf(installationId);
    await this.eachShard(digests, (stem, some) => ADD.run(this.redis, [stem], [n, ...some]));
  }

  async remove(installationId: string, digests: readonly string[]): Promise<void> {
    if (digests.length === 0) return;
    const n = await this.numberOf(installationId);
    await this.eachShard(digests, (stem, some) => REMOVE.run(this.redis, [stem], [n, ...some]));
  }

  /** The installations listed for the slug's digest (see above: possibly one with no record on it). */
  async installations(digest: string): Promise<string[]> {
    const stem = this.keys.slugInstallationsShard(shardOf(digest));
    const raw = (await GET.run(this.redis, [stem], [digest])) as string | null;
    if (!raw) return [];
    const ids = await this.redis.hmget(
      this.keys.slugInstallationNumbers(),
      ...raw.split(' ').map((n) => `n:${n}`),
    );
    return ids.filter((id): id is string => id !== null);
  }

  /** A removed installation's number, out of the numbers hash (after `remove` took it out of the shards). */
  async forgetInstallation(installationId: string): Promise<void> {
    await FORGET_NUMBER.run(this.redis, [this.keys.slugInstallationNumbers()], [installationId]);
  }

  /**
   * Asked of Redis each time, not kept in the process: a removed installation installed again gets a new
   * number, which another process's copy of the old one would miss.
   */
  private async numberOf(installationId: string): Promise<string> {
    return String(await NUMBER.run(this.redis, [this.keys.slugInstallationNumbers()], [installationId]));
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
