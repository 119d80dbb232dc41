import { z } from 'zod';
import type { RedisClient } from '../redis.js';
import { countingUnit } from '../server/counting-unit.js';
import { Keys } from '../storage/keys.js';
import { LuaScript } from '../storage/lua-script.js';

/** Failed logins allowed per client address in one window; a guessing script is slowed to a crawl. */
export const LOGIN_FAILURES_PER_WINDOW = 10;
export const LOGIN_WINDOW_MS = 15 * 60 * 1000;
/**
 * The most clients (IPv4 addresses, IPv6 /64s) with a counter of their own at once. Past it, every further
 * client shares one counter (with the same limit) until a window ends, so a flood from many addresses costs a
 * bounded number of Redis keys and still a bounded number of guesses.
 */
export const LOGIN_COUNTED_CLIENTS_MAX = 10_000;

/** The counter's name for the clients that found the table of counted clients full. */
const OVERFLOW_UNIT = 'overflow';

/** One presentation judged, the count deciding and changing in one atomic step (login-judge.lua). */
const JUDGE = LuaScript.load('login-judge');
const judgeReply = z.tuple([z.enum(['throttled', 'let-in', 'refused']), z.number()]);
/** The client's own counter while the table of counted clients has room, else the shared one. */
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

  /** The counter `address` counts in. */
  private async counterOf(address: string): Promise<string> {
    const unit = countingUnit(address);
    const own = await COUNTER_FOR.run(
      this.redis,
      [this.keys.adminLoginClients()],
      [unit, LOGIN_WINDOW_MS, this.capacity],
      counterForReply,
    );
    return this.keys.adminLoginFailures(own === 'own' ? unit : OVERFLOW_UNIT);
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
