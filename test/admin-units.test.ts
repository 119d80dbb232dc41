import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { AdminAuth, SESSION_TTL_MS } from '../src/admin/admin-auth.js';
import { html, joinHtml } from '../src/admin/html.js';
import { scoreBuckets } from '../src/admin/overview.js';
import { safeNextPath } from '../src/admin/schemas.js';
import { reviewItemView } from '../src/admin/views/parts.js';
import { LOGIN_FAILURES_PER_WINDOW, LoginThrottle } from '../src/auth/login-throttle.js';
import { SessionRevocations } from '../src/auth/session-revocations.js';
import { closeRedis, createRedis } from '../src/redis.js';
import { cookieValue } from '../src/util/cookies.js';
import { REDIS_URL } from './support/redis-url.js';

/** The admin page's building blocks on their own: escaping, sessions and CSRF, buckets, redirects, throttling. */

describe('html', () => {
  it('escapes interpolated text, in element content and in attributes', () => {
    const name = `<img src=x onerror="alert('x')">&`;
    const out = html`<p title="${name}">${name}</p>`.value;
    expect(out).toBe(
      '<p title="&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt;&amp;">&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt;&amp;</p>',
    );
  });

  it('keeps nested fragments as markup, renders lists, and drops null, undefined and false', () => {
    const items = ['a<b', 'c'].map((t) => html`<li>${t}</li>`);
    expect(html`<ul>${items}</ul>${null}${undefined}${false}${0}`.value).toBe(
      '<ul><li>a&lt;b</li><li>c</li></ul>0',
    );
    expect(joinHtml(['<x>', html`<br>`], html`, `).value).toBe('&lt;x&gt;, <br>');
  });

  it('renders a review item from the CRM without letting its text become markup', () => {
    const evil = '<script>alert(1)</script>';
    const out = reviewItemView(
      'hubspot-1',
      {
        recordId: '42',
        name: evil,
        country: evil,
        industry: null,
        at: new Date(0).toISOString(),
        candidates: [{ slug: `x"><script>`, name: evil, why: evil }],
      },
      'csrf-token',
    ).value;
    expect(out).not.toContain('<script>');
    expect(out).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(out).toContain('value="x&quot;&gt;&lt;script&gt;"');
    // Accept, reject, set a slug and request a report: every form carries the CSRF token.
    const forms = out.match(/<form\b/g) ?? [];
    expect(forms).toHaveLength(4);
    expect(out.match(/name="_csrf" value="csrf-token"/g)).toHaveLength(forms.length);
  });
});

describe('AdminAuth', () => {
  const key = randomBytes(32);
  let now = 1_800_000_000_000;
  const auth = new AdminAuth({
    adminToken: 'admin-token-0123456789',
    encryptionKey: key,
    secureCookies: false,
    now: () => now,
  });

  it('compares the admin token exactly, whatever the length of the guess', () => {
    expect(auth.tokenMatches('admin-token-0123456789')).toBe(true);
    expect(auth.tokenMatches('admin-token-012345678')).toBe(false);
    expect(auth.tokenMatches('admin-token-0123456789 ')).toBe(false);
    expect(auth.tokenMatches('')).toBe(false);
  });

  it('reads back its own session until it expires', () => {
    const { session, cookieValue: value } = auth.issueSession();
    expect(auth.readSession(value)).toEqual(session);
    expect(session.expiresAt).toBe(now + SESSION_TTL_MS);
    now += SESSION_TTL_MS - 1;
    expect(auth.readSession(value)).toEqual(session);
    now += 1;
    expect(auth.readSession(value)).toBeNull();
  });

  it('refuses a cookie with any part changed, or signed under another key or admin token', () => {
    const { cookieValue: value } = auth.issueSession();
    const [version, id, expiry, mac] = value.split('.') as [string, string, string, string];
    const later = (Number.parseInt(expiry, 36) + 10 * SESSION_TTL_MS).toString(36);
    const otherId = `${id.slice(0, -1)}${id.endsWith('A') ? 'B' : 'A'}`;
    for (const forged of [
      `${version}.${otherId}.${expiry}.${mac}`,
      `${version}.${id}.${later}.${mac}`,
      `${version}.${id}.${expiry}.${mac.slice(0, -1)}`,
      `v2.${id}.${expiry}.${mac}`,
      `${version}.${id}.${expiry}`,
      '',
    ]) {
      expect(auth.readSession(forged)).toBeNull();
    }
    const otherKey = new AdminAuth({
      adminToken: 'admin-token-0123456789',
      encryptionKey: randomBytes(32),
      secureCookies: false,
      now: () => now,
    });
    const otherToken = new AdminAuth({
      adminToken: 'a-rotated-admin-token!',
      encryptionKey: key,
      secureCookies: false,
      now: () => now,
    });
    expect(otherKey.readSession(value)).toBeNull();
    expect(otherToken.readSession(value)).toBeNull();
  });

  it('derives a different CSRF token per session and accepts only its own', () => {
    const a = auth.issueSession().session;
    const b = auth.issueSession().session;
    expect(auth.csrfTokenFor(a)).not.toBe(auth.csrfTokenFor(b));
    expect(auth.csrfMatches(a, auth.csrfTokenFor(a))).toBe(true);
    expect(auth.csrfMatches(a, auth.csrfTokenFor(b))).toBe(false);
    expect(auth.csrfMatches(a, undefined)).toBe(false);
    expect(auth.csrfMatches(a, '')).toBe(false);
  });

  it('marks cookies Secure only for an https app, and the session cookie HttpOnly', () => {
    const { session, cookieValue: value } = auth.issueSession();
    const plain = auth.sessionCookie(value, session);
    expect(plain).toMatch(/HttpOnly/);
    expect(plain).toMatch(/SameSite=Strict/);
    expect(plain).not.toMatch(/Secure/);
    const https = new AdminAuth({
      adminToken: 'admin-token-0123456789',
      encryptionKey: key,
      secureCookies: true,
      now: () => now,
    });
    expect(https.sessionCookie(value, session)).toMatch(/; Secure/);
    expect(https.xsrfCookie(session)).toMatch(/; Secure/);
    expect(https.xsrfCookie(session)).not.toMatch(/HttpOnly/);
  });

  it('finds one cookie among several', () => {
    expect(cookieValue('a=1; rc_admin_session=v1.x.y.z; b=2', 'rc_admin_session')).toBe('v1.x.y.z');
    expect(cookieValue('xrc_admin_session=1', 'rc_admin_session')).toBeUndefined();
    expect(cookieValue(undefined, 'rc_admin_session')).toBeUndefined();
  });
});

describe('scoreBuckets', () => {
  it('spans 0–100 in ten buckets and counts a perfect score in the last', () => {
    const buckets = scoreBuckets([0, 9.99, 10, 55, 100], 10);
    expect(buckets.map((b) => [b.from, b.to])).toEqual([
      [0, 10],
      [10, 20],
      [20, 30],
      [30, 40],
      [40, 50],
      [50, 60],
      [60, 70],
      [70, 80],
      [80, 90],
      [90, 100],
    ]);
    expect(buckets.map((b) => b.count)).toEqual([2, 1, 0, 0, 0, 1, 0, 0, 0, 1]);
  });

  it('spans the scores seen when they leave 0–100, and shows empty buckets when there are none', () => {
    const wide = scoreBuckets([-5, 150, 995], 4);
    expect(wide[0]!.from).toBe(-5);
    expect(wide[3]!.to).toBe(995);
    expect(wide.map((b) => b.count)).toEqual([2, 0, 0, 1]);
    expect(scoreBuckets([], 10).every((b) => b.count === 0)).toBe(true);
    expect(scoreBuckets([], 10)).toHaveLength(10);
  });
});

describe('safeNextPath', () => {
  it('keeps paths of the admin page and sends everything else to /admin', () => {
    expect(safeNextPath('/admin/installations/hubspot-1?page=2#review')).toBe(
      '/admin/installations/hubspot-1?page=2#review',
    );
    expect(safeNextPath('/admin')).toBe('/admin');
    for (const bad of [
      '//evil.example',
      'https://evil.example/admin',
      '/administrator',
      '/admin//evil.example',
      '/admin\\x',
      '/metrics',
      undefined,
    ]) {
      expect(safeNextPath(bad)).toBe('/admin');
    }
  });
});

describe('Redis-backed session revocations and login throttle', () => {
  const prefix = `rc-test-${randomUUID().slice(0, 8)}`;
  const redis = createRedis(REDIS_URL, 'worker');

  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.unlink(...keys);
    await closeRedis(redis);
  });

  it('remembers a revoked session only until it would have expired', async () => {
    const revocations = new SessionRevocations(redis, prefix);
    await revocations.revoke('session-a', Date.now() + 60_000);
    expect(await revocations.isRevoked('session-a')).toBe(true);
    expect(await revocations.isRevoked('session-b')).toBe(false);
    const ttl = await redis.pttl(`${prefix}:admin:revoked-session:session-a`);
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
    await revocations.revoke('session-c', Date.now() - 1);
    expect(await revocations.isRevoked('session-c')).toBe(false);
  });

  it('blocks an address after too many failures, in a window that later failures do not extend', async () => {
    const throttle = new LoginThrottle(redis, prefix);
    for (let i = 0; i < LOGIN_FAILURES_PER_WINDOW - 1; i++) await throttle.recordFailure('10.0.0.1');
    expect(await throttle.isBlocked('10.0.0.1')).toBe(false);
    const key = `${prefix}:admin:login-failures:10.0.0.1`;
    await redis.pexpire(key, 5_000);
    await throttle.recordFailure('10.0.0.1');
    expect(await throttle.isBlocked('10.0.0.1')).toBe(true);
    expect(await redis.pttl(key)).toBeLessThanOrEqual(5_000);
    expect(await throttle.isBlocked('10.0.0.2')).toBe(false);
    await throttle.reset('10.0.0.1');
    expect(await throttle.isBlocked('10.0.0.1')).toBe(false);
  });
});
