import { createHmac, randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  computeHubSpotSignatureV3,
  verifyHubSpotSignatureV3,
} from '../connectors/hubspot/webhooks/webhook-signature.js';
import { AdminAuth, SESSION_COOKIE } from '../src/admin/admin-auth.js';
import { OAuthStateError, OAuthStateStore } from '../src/auth/oauth-state.js';
import { closeRedis, createRedis, waitForRedis } from '../src/redis.js';
import { cookieValue } from '../src/util/cookies.js';
import { verifyHex, verifyStandard, WebhookSignatureError } from '../src/webhooks/report-signature.js';
import { REDIS_URL } from './support/redis-url.js';

/**
 * Every comparison of a secret an attacker can probe goes through `crypto.timingSafeEqual` with the
 * attacker's bytes: the Standard Webhooks and hex report-webhook signatures, HubSpot's v3 signature, the OAuth
 * state's signature, the admin token, the admin session cookie and the CSRF token.
 */

const compared = vi.hoisted(() => [] as [Buffer, Buffer][]);

vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  const timingSafeEqual = (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
    compared.push([
      Buffer.from(a.buffer, a.byteOffset, a.byteLength),
      Buffer.from(b.buffer, b.byteOffset, b.byteLength),
    ]);
    return actual.timingSafeEqual(a, b);
  };
  return { ...actual, timingSafeEqual, default: { ...actual, timingSafeEqual } };
});

const redis = createRedis(REDIS_URL, 'producer');

beforeAll(async () => {
  await waitForRedis(redis);
});

afterAll(async () => {
  await closeRedis(redis);
});

beforeEach(() => {
  compared.length = 0;
});

/** Whether `candidate` reached timingSafeEqual as one of its two sides. */
function comparedInConstantTime(candidate: Buffer): boolean {
  return compared.some(([a, b]) => a.equals(candidate) || b.equals(candidate));
}

describe('secrets are compared in constant time', () => {
  it('the Standard Webhooks signature (issue 30: node:crypto, no longer the package)', () => {
    const body = Buffer.from('{"id":"e1"}');
    const now = new Date();
    const forged = new Webhook(`whsec_${randomBytes(24).toString('base64')}`).sign(
      'e1',
      now,
      body.toString(),
    );
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    const headers = {
      'webhook-id': 'e1',
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': forged,
    };
    expect(() => verifyStandard([secret], headers, body)).toThrow(WebhookSignatureError);
    expect(comparedInConstantTime(Buffer.from(forged.slice('v1,'.length)))).toBe(true);
  });

  it('the hex webhook signature', () => {
    const body = Buffer.from('{"id":"e1"}');
    const forged = createHmac('sha256', 'another secret').update(body).digest('hex');
    expect(() =>
      verifyHex(['the secret'], { 'x-signature': `sha256=${forged}` }, 'x-signature', body),
    ).toThrow(WebhookSignatureError);
    expect(comparedInConstantTime(Buffer.from(forged, 'hex'))).toBe(true);
  });

  it("HubSpot's v3 signature", () => {
    const now = Date.now();
    const forged = computeHubSpotSignatureV3(
      'another secret',
      'POST',
      'https://app.example/webhooks/hubspot',
      '[]',
      String(now),
    );
    expect(() =>
      verifyHubSpotSignatureV3({
        method: 'POST',
        url: 'https://app.example/webhooks/hubspot',
        rawBody: Buffer.from('[]'),
        timestampHeader: String(now),
        signatureHeader: forged,
        clientSecret: 'the client secret',
        now,
      }),
    ).toThrow(/does not match/);
    expect(comparedInConstantTime(Buffer.from(forged))).toBe(true);
  });

  it("the OAuth state's signature", async () => {
    const store = new OAuthStateStore(randomBytes(32), { secureCookies: false });
    const issued = store.issue('hubspot');
    const cookie = issued.cookie.split(';')[0];
    const [nonce, provider, signature] = issued.state.split('.') as [string, string, string];
    const forged = `${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BB' : 'AA'}`;
    expect(() => store.consume('hubspot', `${nonce}.${provider}.${forged}`, cookie)).toThrow(OAuthStateError);
    expect(comparedInConstantTime(Buffer.from(forged))).toBe(true);
    // The real one is accepted only after the same comparison.
    expect(store.consume('hubspot', issued.state, cookie)).toEqual({});
  });

  it('the admin token, the session cookie and the CSRF token', () => {
    const auth = new AdminAuth({
      adminToken: 'the-admin-token-of-this-app',
      encryptionKey: randomBytes(32),
      secureCookies: false,
    });
    expect(auth.tokenMatches('a-guess-at-the-admin-token')).toBe(false);
    // Both sides are hashed first, so even the length of the token is not given away.
    expect(compared.length).toBe(1);

    const { session, cookieValue: value } = auth.issueSession();
    const forgedCookie = `${value.slice(0, -2)}${value.endsWith('AA') ? 'BB' : 'AA'}`;
    expect(auth.readSession(forgedCookie)).toBeNull();
    expect(comparedInConstantTime(Buffer.from(forgedCookie.split('.').at(-1)!))).toBe(true);
    expect(cookieValue(`${SESSION_COOKIE}=${value}`, SESSION_COOKIE)).toBe(value);

    const csrf = auth.csrfTokenFor(session);
    const forgedCsrf = `${csrf.slice(0, -2)}${csrf.endsWith('AA') ? 'BB' : 'AA'}`;
    expect(auth.csrfMatches(session, forgedCsrf)).toBe(false);
    expect(comparedInConstantTime(Buffer.from(forgedCsrf))).toBe(true);
  });
});
