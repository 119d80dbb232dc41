import type { RedisClient } from '../redis.js';
import { countingUnit } from '../server/counting-unit.js';
import { Keys } from '../storage/keys.js';
import { RedisScript } from '../storage/redis-script.js';

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

/**
 * One presentation of the admin token judged: the count decides and changes in one atomic step, so of any
 * number of concurrent presentations, at most LOGIN_FAILURES_PER_WINDOW wrong ones are answered as wrong and
 * every one Redis runs after the limit is reached (right or wrong) is throttled. A right token adds nothing to
 * the count, so a script sending many requests at once with the right token is never slowed.
 * KEYS[1] the client's counter; ARGV: limit, window (ms), 1 when the token is right.
 * Returns {verdict, milliseconds left in the window}.
 */
const JUDGE = new RedisScript(`
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count >= tonumber(ARGV[1]) then
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl < 0 then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    ttl = tonumber(ARGV[2])
  end
  return {'throttled', ttl}
end
if ARGV[3] == '1' then return {'let-in', 0} end
count = redis.call('INCR', KEYS[1])
if count == 1 or redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return {'refused', 0}
`);

/**
 * Which counter a client uses: its own while the table of counted clients has room or holds it already, else
 * the shared one. A client's entry lives a window past its latest presentation, so it outlives the counter a
 * failure in that window started. KEYS[1] the table (sorted set: client -> when its entry ends, ms);
 * ARGV: client, window (ms), capacity. Returns 1 for its own counter, 0 for the shared one.
 */
const COUNTER_FOR = new RedisScript(`
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ms)
local ends = ms + tonumber(ARGV[2])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) or redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('ZADD', KEYS[1], ends, ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`);

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
    );
    return this.keys.adminLoginFailures(own === 1 ? unit : OVERFLOW_UNIT);
  }

  /** Judges a presentation from `address` whose token is `right` or not (compared in constant time). */
  async judge(address: string, right: boolean): Promise<LoginVerdict> {
    const reply = await JUDGE.run(
      this.redis,
      [await this.counterOf(address)],
      [LOGIN_FAILURES_PER_WINDOW, LOGIN_WINDOW_MS, right ? 1 : 0],
    );
    const [verdict, ttl] = reply as [string, number];
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
