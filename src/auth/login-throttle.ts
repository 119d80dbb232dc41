import { z } from 'zod';
import type { RedisClient } from '../redis.js';
import { Keys } from '../storage/keys.js';
import { LuaScript } from '../storage/lua-script.js';
import { countingUnit } from '../util/counting-unit.js';

/** Failed logins allowed per client address in one window; a guessing script is slowed to a crawl. */
export const LOGIN_FAILURES_PER_WINDOW = 10;
export const LOGIN_WINDOW_MS = 15 * 60 * 1000;
/**
 * The most entries of one level at once: units (IPv4 addresses, IPv6 /64s) with a counter of their own, then
 * the blocks they widen to (CAPPED_BLOCK_LEVELS). A flood from many addresses costs a bounded number of Redis keys.
 */
export const LOGIN_COUNTED_CLIENTS_MAX = 10_000;

/**
 * Where a client is counted when every table before is full, widest last: an IPv4 address in its /24, /16,
 * then /8; an IPv6 /64 in its /48, /32, then /16 (site, provider, registry-sized blocks). The last level has
 * no table: its keys are bounded by the address space (256 IPv4 /8s, 65,536 IPv6 /16s). A client is never
 * counted with clients outside its block, so no flood can lock out an admin from elsewhere; each level's
 * counter holds the same limit, so the guesses of one unit and of all clients together stay bounded
 * (docs/security.md).
 */
const CAPPED_BLOCK_LEVELS = 2;

/** Clients without an address (no IP to widen) past a full table: one shared counter, as before blocks. */
const OVERFLOW_UNIT = 'overflow';

/** One presentation judged, the count deciding and changing in one atomic step (login-judge.lua). */
const JUDGE = LuaScript.load('login-judge');
const judgeReply = z.tuple([z.enum(['throttled', 'let-in', 'refused']), z.number()]);
/** Whether a unit or block gets a counter of its own at its level: the level's table has room or holds it. */
const COUNTER_FOR = LuaScript.load('login-counter-for');
const counterForReply = z.enum(['own', 'shared']);

export type LoginVerdict =
  | { kind: 'let-in' }
  | { kind: 'refused' }
  | { kind: 'throttled'; retryAfterSeconds: number };

/**
 * Counts failed presentations of the admin token per client (countingUnit: an IPv4 address or an IPv6 /64) in
 * a fixed window, shared by every process on one Redis: the login form, `Authorization: Bearer` and forged
 * session cookies all count here, so no way in is cheaper to guess through than another.
 */
export class LoginThrottle {
  private readonly keys: Keys;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
    private readonly capacity = LOGIN_COUNTED_CLIENTS_MAX,
  ) {
    this.keys = new Keys(prefix);
  }

  /**
   * The counter `address` counts in: its unit's own while the table of units has room or holds it, else the
   * first of its blocks whose table has room or holds it, else its widest block. One round trip per level
   * tried; a level is tried only when the one before is full.
   */
  private async counterOf(address: string): Promise<string> {
    const unit = countingUnit(address);
    const blocks = blocksOf(unit);
    const levels = [
      { name: unit, table: this.keys.adminLoginClients() },
      ...blocks
        .slice(0, CAPPED_BLOCK_LEVELS)
        .map((name, i) => ({ name, table: this.keys.adminLoginBlocks(i + 1) })),
    ];
    for (const level of levels) {
      const own = await COUNTER_FOR.run(
        this.redis,
        [level.table],
        [level.name, LOGIN_WINDOW_MS, this.capacity],
        counterForReply,
      );
      if (own === 'own') return this.keys.adminLoginFailures(level.name);
    }
    return this.keys.adminLoginFailures(blocks[CAPPED_BLOCK_LEVELS] ?? OVERFLOW_UNIT);
  }

  /** Judges a presentation from `address` whose token is `right` or not (compared in constant time). */
  async judge(address: string, right: boolean): Promise<LoginVerdict> {
    const [verdict, ttl] = await JUDGE.run(
      this.redis,
      [await this.counterOf(address)],
      [LOGIN_FAILURES_PER_WINDOW, LOGIN_WINDOW_MS, right ? 1 : 0],
      judgeReply,
    );
    if (verdict === 'throttled')
      return { kind: 'throttled', retryAfterSeconds: Math.max(1, Math.ceil(ttl / 1000)) };
    return verdict === 'let-in' ? { kind: 'let-in' } : { kind: 'refused' };
  }

  /** A failure that is counted but answered by the caller regardless (a forged session cookie). */
  async recordFailure(address: string): Promise<void> {
    await this.judge(address, false);
  }

  async isBlocked(address: string): Promise<boolean> {
    const count = Number((await this.redis.get(await this.counterOf(address))) ?? 0);
    return count >= LOGIN_FAILURES_PER_WINDOW;
  }

  /** A right token on the login form: the client's failures are forgotten. */
  async reset(address: string): Promise<void> {
    await this.redis.del(this.keys.adminLoginFailures(countingUnit(address)));
  }
}

/**
 * The blocks a counting unit widens to, narrowest first (CAPPED_BLOCK_LEVELS capped ones, then the widest):
 * `203.0.113.5` gives `203.0.113.0/24`, `203.0.0.0/16`, `203.0.0.0/8`; `2001:db8:1:2::/64` gives
 * `2001:db8:1::/48`, `2001:db8::/32`, `2001::/16`. No block name is a unit name, so their counters never mix.
 * A unit that is not an address has none.
 */
export function blocksOf(unit: string): string[] {
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.\d+$/.exec(unit);
  if (v4) {
    const [, a, b, c] = v4;
    return [`${a}.${b}.${c}.0/24`, `${a}.${b}.0.0/16`, `${a}.0.0.0/8`];
  }
  const v6 = /^([0-9a-f]+):([0-9a-f]+):([0-9a-f]+):[0-9a-f]+::\/64$/.exec(unit);
  if (v6) {
    const [, a, b, c] = v6;
    return [`${a}:${b}:${c}::/48`, `${a}:${b}::/32`, `${a}::/16`];
  }
  return [];
}
