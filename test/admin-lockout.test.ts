import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { AdminAuth } from '../src/admin/admin-auth.js';
import { AdminGuard } from '../src/admin/guard.js';
import {
  LOGIN_COUNTED_CLIENTS_MAX,
  LOGIN_FAILURES_PER_WINDOW,
  LoginThrottle,
} from '../src/auth/login-throttle.js';
import { SessionRevocations } from '../src/auth/session-revocations.js';
import { ConfigError, loadConfig, type TrustProxy } from '../src/config.js';
import { foldLoginCountersIntoUnits } from '../src/migrations/001-login-counters-into-units.js';
import { AddressWindow, countAnswer, refusalWait } from '../src/server/address-limits.js';
import { countingUnit } from '../src/util/counting-unit.js';
import { redisWithFreshPrefixes } from './support/redis-prefixes.js';

/**
 * Issue 26, points 5 and 9: the admin lockout under concurrency (the count decides and changes in one atomic
 * step, so 50 wrong tokens at once get at most 10 answers of 401), TRUST_PROXY refusing `true`, IPv6 clients
 * counted per /64, and a capped number of failure counters.
 */

const { redis, freshPrefix } = redisWithFreshPrefixes('lockout');
const TOKEN = 'the-right-admin-token-for-lockout-tests';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

/** The admin guard alone in front of one API route, on a real HTTP server and the real Redis. */
async function guardedServer(trustProxy: TrustProxy = false): Promise<string> {
  const prefix = freshPrefix();
  const auth = new AdminAuth({
    adminToken: TOKEN,
    encryptionKey: Buffer.alloc(32, 3),
    secureCookies: false,
  });
  const guard = new AdminGuard(
    auth,
    new SessionRevocations(redis(), prefix),
    new LoginThrottle(redis(), prefix),
  );
  const app = express();
  app.set('trust proxy', trustProxy);
  app.get('/ping', (_req, res) => {
    res.json({ ok: true });
  });
  app.get('/admin/api/installations', guard.identify, guard.requireApi, (_req, res) => {
    res.json({ installations: [] });
  });
  const server = createServer(app);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/admin/api/installations`;
}

const bearer = (url: string, token: string, headers: Record<string, string> = {}) =>
  fetch(url, { headers: { authorization: `Bearer ${token}`, ...headers } }).then(async (res) => {
    await res.arrayBuffer();
    return res.status;
  });

const tally = (statuses: number[]) =>
  statuses.reduce<Record<number, number>>((t, s) => {
    t[s] = (t[s] ?? 0) + 1;
    return t;
  }, {});

/**
 * `count` requests that reach the server together: each on a connection of its own opened beforehand, so
 * none waits for a connection to be set up.
 */
async function together(url: string, count: number, tokenOf: (i: number) => string): Promise<number[]> {
  const dispatcher = new Agent({ connections: count, pipelining: 1 });
  try {
    const ping = new URL('/ping', url).toString();
    await Promise.all(
      Array.from({ length: count }, () => undiciFetch(ping, { dispatcher }).then((r) => r.arrayBuffer())),
    );
    return await Promise.all(
      Array.from({ length: count }, (_, i) =>
        undiciFetch(url, { dispatcher, headers: { authorization: `Bearer ${tokenOf(i)}` } }).then(
          async (res) => {
            await res.arrayBuffer();
            return res.status;
          },
        ),
      ),
    );
  } finally {
    await dispatcher.close();
  }
}

describe('50 concurrent wrong bearer tokens (point 5)', () => {
  it('answer 401 at most 10 times; the rest, and then the right token, answer 429', async () => {
    const url = await guardedServer();
    const statuses = await together(url, 50, (i) => `${TOKEN}-wrong-${i}`);
    expect(tally(statuses)).toEqual({ 401: LOGIN_FAILURES_PER_WINDOW, 429: 50 - LOGIN_FAILURES_PER_WINDOW });
    expect(await bearer(url, TOKEN)).toBe(429);
  });

  it('the same at the throttle itself: 50 concurrent failures, exactly 10 refused and the counter at 10', async () => {
    const prefix = freshPrefix();
    const throttle = new LoginThrottle(redis(), prefix);
    const verdicts = await Promise.all(Array.from({ length: 50 }, () => throttle.judge('192.0.2.7', false)));
    expect(verdicts.filter((v) => v.kind === 'refused')).toHaveLength(LOGIN_FAILURES_PER_WINDOW);
    expect(verdicts.filter((v) => v.kind === 'throttled')).toHaveLength(50 - LOGIN_FAILURES_PER_WINDOW);
    expect(await redis().get(`${prefix}:admin:login-failures:192.0.2.7`)).toBe(
      String(LOGIN_FAILURES_PER_WINDOW),
    );
  });

  it('many concurrent requests with the right token are all let in and count nothing', async () => {
    const url = await guardedServer();
    const statuses = await together(url, 30, () => TOKEN);
    expect(tally(statuses)).toEqual({ 200: 30 });
    for (let i = 0; i < LOGIN_FAILURES_PER_WINDOW - 1; i++) expect(await bearer(url, `wrong-${i}`)).toBe(401);
    expect(await bearer(url, TOKEN)).toBe(200);
  });
});

describe('TRUST_PROXY (point 9)', () => {
  const base = {
    ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
    ADMIN_TOKEN: 'an-admin-token-of-some-length',
    REPORTS_API_URL: 'http://127.0.0.1:4010/api',
  };
  const load = (extra: Record<string, string>) => loadConfig({ ...base, ...extra }, { envFile: null });

  it('refuses true at start-up and says why', () => {
    for (const value of ['true', 'TRUE', ' true ']) {
      let error: unknown;
      try {
        load({ TRUST_PROXY: value });
      } catch (err) {
        error = err;
      }
      expect(error, value).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).variable).toBe('TRUST_PROXY');
      expect((error as ConfigError).message).toMatch(/any client could choose its own address/);
      expect((error as ConfigError).message).toMatch(/number of proxies/);
    }
  });

  it('takes a hop count or addresses and subnets', () => {
    expect(load({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(load({ TRUST_PROXY: '10.0.0.0/8,2001:db8::/32, 127.0.0.1' }).trustProxy).toEqual([
      '10.0.0.0/8',
      '2001:db8::/32',
      '127.0.0.1',
    ]);
  });
});

describe('IPv6 clients are counted per /64 (point 9)', () => {
  it('gives the same unit to every address of one /64 and keeps IPv4 as it is', () => {
    expect(countingUnit('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(countingUnit('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(countingUnit('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(countingUnit('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(countingUnit('::1')).toBe('0:0:0:0::/64');
    expect(countingUnit('::ffff:203.0.113.5')).toBe('203.0.113.5');
    expect(countingUnit('203.0.113.5')).toBe('203.0.113.5');
    expect(countingUnit('2001:db8:1:3::1')).not.toBe(countingUnit('2001:db8:1:2::1'));
  });

  it('locks a whole /64 out of the admin API after 10 wrong tokens from 10 of its addresses', async () => {
    const url = await guardedServer(['loopback']);
    const from = (ip: string) => ({ 'x-forwarded-for': ip });
    for (let i = 1; i <= LOGIN_FAILURES_PER_WINDOW; i++) {
      expect(await bearer(url, 'wrong', from(`2001:db8:1:2::${i.toString(16)}`))).toBe(401);
    }
    expect(await bearer(url, TOKEN, from('2001:db8:1:2:abcd::99'))).toBe(429);
    expect(await bearer(url, TOKEN, from('2001:db8:1:3::1'))).toBe(200);
  });

  it('refuses webhook senders per /64 too', () => {
    const window = new AddressWindow(3, 60_000, 100, () => 0);
    for (let i = 1; i <= 3; i++) countAnswer(window, `2001:db8:9:9::${i}`, 401);
    expect(refusalWait(window, '2001:db8:9:9:1:2:3:4')).toBe(60);
    expect(refusalWait(window, '2001:db8:9:a::1')).toBeNull();
  });
});

describe('failure counters are capped (point 9)', () => {
  it('documents its cap', () => {
    expect(LOGIN_COUNTED_CLIENTS_MAX).toBe(10_000);
  });

  it('past the cap, further clients are counted by their blocks: few keys, and still at most 10 guesses per block', async () => {
    const prefix = freshPrefix();
    const capacity = 5;
    const throttle = new LoginThrottle(redis(), prefix, capacity);
    const verdicts = [];
    for (let i = 1; i <= 100; i++) verdicts.push((await throttle.judge(`198.51.100.${i}`, false)).kind);
    // The first five have their own counters (one failure each); the other 95 share their /24's: 10 refused.
    expect(verdicts.filter((v) => v === 'refused')).toHaveLength(capacity + LOGIN_FAILURES_PER_WINDOW);
    expect(verdicts.slice(capacity + LOGIN_FAILURES_PER_WINDOW).every((v) => v === 'throttled')).toBe(true);
    const counters = await redis().keys(`${prefix}:admin:login-failures:*`);
    expect(counters).toHaveLength(capacity + 1);
    expect(await redis().zcard(`${prefix}:admin:login-clients`)).toBe(capacity);
    // A right token from the locked block is judged by the block's counter: it cannot slip through.
    expect((await throttle.judge('198.51.100.200', true)).kind).toBe('throttled');
    // A client with its own counter is judged by it.
    expect((await throttle.judge('198.51.100.1', true)).kind).toBe('let-in');
  });
});

describe('a correct admin token is never refused because of clients elsewhere', () => {
  /** As the code before blocks wrote it: `count` units in the table, each at the limit, in one pipeline. */
  async function seedLockedUnits(prefix: string, count: number): Promise<void> {
    const ends = Date.now() + 15 * 60_000;
    for (let from = 0; from < count; from += 2_000) {
      const batch = redis().pipeline();
      for (let i = from; i < Math.min(count, from + 2_000); i++) {
        const unit = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
        batch.zadd(`${prefix}:admin:login-clients`, ends, unit);
        batch.set(`${prefix}:admin:login-failures:${unit}`, LOGIN_FAILURES_PER_WINDOW, 'PX', 15 * 60_000);
      }
      await batch.exec();
    }
  }

  it('10,001 units fail, 10 more fail past the table: a fresh address with the right token gets in', async () => {
    const prefix = freshPrefix();
    await seedLockedUnits(prefix, LOGIN_COUNTED_CLIENTS_MAX);
    const auth = new AdminAuth({
      adminToken: TOKEN,
      encryptionKey: Buffer.alloc(32, 3),
      secureCookies: false,
    });
    const throttle = new LoginThrottle(redis(), prefix);
    const guard = new AdminGuard(auth, new SessionRevocations(redis(), prefix), throttle);
    const app = express();
    app.set('trust proxy', ['loopback']);
    app.get('/admin/api/installations', guard.identify, guard.requireApi, (_req, res) => {
      res.json({ installations: [] });
    });
    const server = createServer(app);
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/admin/api/installations`;
    const from = (ip: string) => ({ 'x-forwarded-for': ip });

    // Unit 10,001 and the attack's further addresses find the table full.
    const attack: number[] = [];
    for (let i = 0; i <= LOGIN_FAILURES_PER_WINDOW + 5; i++) {
      attack.push(await bearer(url, `${TOKEN}-guess-${i}`, from(`10.200.${i}.1`)));
    }
    expect(attack.filter((s) => s === 401).length).toBeGreaterThan(0);
    expect(attack.every((s) => s === 401 || s === 429)).toBe(true);
    expect(await redis().zcard(`${prefix}:admin:login-clients`)).toBe(LOGIN_COUNTED_CLIENTS_MAX);

    expect(await bearer(url, TOKEN, from('192.0.2.77'))).toBe(200);
    expect(await bearer(url, TOKEN, from('2001:db8:77::1'))).toBe(200);
    // The attacker's own neighbourhood stays locked, with the right token too.
    for (let i = 0; i < LOGIN_FAILURES_PER_WINDOW; i++)
      await bearer(url, `wrong-${i}`, from(`10.201.0.${i + 1}`));
    expect(await bearer(url, TOKEN, from('10.201.0.200'))).toBe(429);
  }, 60_000);

  it("an attacker's guesses stay bounded: 10 per unit, 10 per block and level, whatever the addresses", async () => {
    const prefix = freshPrefix();
    const capacity = 20;
    const throttle = new LoginThrottle(redis(), prefix, capacity);
    // One unit guessing on: 10 answers of 401.
    const one = [];
    for (let i = 0; i < 30; i++) one.push((await throttle.judge('203.0.113.9', false)).kind);
    expect(one.filter((v) => v === 'refused')).toHaveLength(LOGIN_FAILURES_PER_WINDOW);

    // 3,000 fresh addresses spread over 3 /8s, each guessing twice: the tables fill, then blocks lock.
    const addresses = Array.from(
      { length: 3_000 },
      (_, i) => `${[11, 12, 13][i % 3]}.${(i * 7) % 256}.${(i * 13) % 256}.${i % 250}`,
    );
    let refused = 0;
    for (let round = 0; round < 2; round++) {
      const verdicts = await Promise.all(addresses.map((a) => throttle.judge(a, false)));
      refused += verdicts.filter((v) => v.kind === 'refused').length;
    }
    // Units with a counter of their own (the table had one entry left), two capped block levels, then the three /8s.
    const bound = LOGIN_FAILURES_PER_WINDOW * (capacity - 1 + capacity + capacity + 3);
    expect(refused).toBeLessThanOrEqual(bound);
    const keys = await redis().keys(`${prefix}:admin:*`);
    expect(keys.length).toBeLessThanOrEqual(3 * capacity + 3 + 3);
    // A fresh admin in another /8 still gets in.
    expect((await throttle.judge('198.18.0.1', true)).kind).toBe('let-in');
  }, 60_000);
});

describe('counters written per IPv6 address before (upgrade)', () => {
  it('are folded into their /64 at start-up: a lockout running during the upgrade holds', async () => {
    const prefix = freshPrefix();
    const old = (client: string) => `${prefix}:admin:login-failures:${client}`;
    await redis().set(old('2001:db8:1:2::5'), '6', 'PX', 600_000);
    await redis().set(old('2001:db8:1:2::6'), '7', 'PX', 300_000);
    await redis().set(old('::ffff:203.0.113.9'), '4', 'PX', 600_000);
    await redis().set(old('198.51.100.4'), '3', 'PX', 600_000);

    expect(await foldLoginCountersIntoUnits(redis(), prefix)).toBe(3);
    expect(await foldLoginCountersIntoUnits(redis(), prefix)).toBe(0);

    expect(await redis().get(old('2001:db8:1:2::/64'))).toBe(String(LOGIN_FAILURES_PER_WINDOW));
    expect(await redis().pttl(old('2001:db8:1:2::/64'))).toBeGreaterThan(300_000);
    expect(await redis().get(old('203.0.113.9'))).toBe('4');
    expect(await redis().get(old('198.51.100.4'))).toBe('3');
    expect(
      await redis().exists(old('2001:db8:1:2::5'), old('2001:db8:1:2::6'), old('::ffff:203.0.113.9')),
    ).toBe(0);
    const throttle = new LoginThrottle(redis(), prefix);
    expect((await throttle.judge('2001:db8:1:2::abc', true)).kind).toBe('throttled');
  });
});
