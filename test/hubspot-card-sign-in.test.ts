import { randomBytes, randomUUID } from 'node:crypto';
import express from 'express';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CARD_REQUESTS_PER_MINUTE } from '../connectors/hubspot/card/card-rate-limit.js';
import { readHubSpotConfig } from '../connectors/hubspot/config.js';
import { hubspotProvider } from '../connectors/hubspot/index.js';
import {
  LOCAL_HUBSPOT_CLIENT_ID,
  LOCAL_HUBSPOT_CLIENT_SECRET,
  LOCAL_HUBSPOT_PORTAL_ID,
  type LocalHubSpot,
  type LocalHubSpotServer,
} from '../connectors/hubspot/local/index.js';
import { HUBSPOT_SCOPES } from '../connectors/hubspot/provider.js';
import { computeHubSpotSignatureV3 } from '../connectors/hubspot/webhooks/webhook-signature.js';
import { providerStorage } from '../src/app/stores.js';
import { OAuthStateStore } from '../src/auth/oauth-state.js';
import type { RecordCardDecision, RecordCardHost, RecordCardSource } from '../src/crm/record-card.js';
import type { DecisionActor } from '../src/decisions/decision-log.js';
import type { Installation } from '../src/installations/store.js';
import { closeRedis, createRedis, deleteByPattern, waitForRedis } from '../src/redis.js';
import { Keys } from '../src/storage/keys.js';
import { SecretBox } from '../src/util/secretbox.js';
import { CookieJar } from './support/cookie-jar.js';
import { startLocalHubSpot } from './support/local-hubspot.js';
import { listenOnLoopback } from './support/loopback-server.js';
import { REDIS_URL } from './support/redis-url.js';

/**
 * Who may act on a HubSpot company through the app card. The connector's HubSpot routes (as the provider
 * mounts them) in front of a record card host that records every read and action, and the local HubSpot for
 * the sign-in: a request signed with the app's secret that names a portal gets nothing of it and changes
 * nothing (the portal in a `hubspot.fetch` URL is whatever the card wrote); a user signed in to portal A who
 * names portal B is refused; a user who may not edit companies is refused; a user HubSpot proved acts, and the
 * decision names them.
 */

/** Portal B: the one with the connector installed and the companies. Portal A: any other. */
const PORTAL_B = LOCAL_HUBSPOT_PORTAL_ID;
const PORTAL_A = '777000111';
const REVIEW_COMPANY = '501';
const NO_MATCH_COMPANY = '502';

const prefix = `rc-test-${randomUUID()}`;
let redis: Redis;
let hubspot: LocalHubSpot;
let hubspotServer: LocalHubSpotServer;
let base: string;
let close: () => Promise<void>;

interface Recorded {
  reads: string[];
  decisions: { installationId: string; recordId: string; decision: RecordCardDecision; by: DecisionActor }[];
  requests: { installationId: string; recordId: string; by: DecisionActor }[];
}
const recorded: Recorded = { reads: [], decisions: [], requests: [] };
/** Actions done in this file so far: they share portal B's one-minute budget. */
let actionsDone = 0;

const installationB = {
  id: `hubspot:${PORTAL_B}`,
  crm: 'hubspot',
  externalId: PORTAL_B,
  status: 'connected',
} as unknown as Installation;

function companyOf(id: string): RecordCardSource | null {
  if (id === REVIEW_COMPANY) {
    return {
      record: { id, name: 'Acme', fields: { matchStatus: 'needs_review' } } as RecordCardSource['record'],
      review: {
        name: 'Acme',
        country: null,
        industry: null,
        at: Date.now(),
        candidates: [
          { slug: 'acme-gmbh', name: 'Acme GmbH', geography: 'Berlin', industry: 'Tools', score: 71 },
          { slug: 'acme-ltd', name: 'Acme Ltd', geography: 'Leeds', industry: 'Tools', score: 40 },
        ],
      } as unknown as RecordCardSource['review'],
      request: null,
    };
  }
  if (id === NO_MATCH_COMPANY) {
    return {
      record: { id, name: 'Nobody', fields: { matchStatus: 'no_match' } } as RecordCardSource['record'],
      review: null,
      request: null,
    };
  }
  return null;
}

const cards: RecordCardHost = {
  async installationOf(_crm, externalId) {
    return externalId === PORTAL_B ? installationB : null;
  },
  async read(installationId, recordId) {
    recorded.reads.push(`${installationId}/${recordId}`);
    return installationId === installationB.id ? companyOf(recordId) : null;
  },
  async decide(installationId, recordId, decision, by) {
    actionsDone++;
    recorded.decisions.push({ installationId, recordId, decision, by });
  },
  async request(installationId, recordId, by) {
    actionsDone++;
    recorded.requests.push({ installationId, recordId, by });
  },
};

beforeAll(async () => {
  redis = createRedis(REDIS_URL, 'producer');
  await waitForRedis(redis);
  ({ hubspot, server: hubspotServer } = await startLocalHubSpot());
  const app = express();
  const served = await listenOnLoopback(app);
  base = served.url;
  close = served.close;
  const hubspotConfig = readHubSpotConfig({
    HUBSPOT_CLIENT_ID: LOCAL_HUBSPOT_CLIENT_ID,
    HUBSPOT_CLIENT_SECRET: LOCAL_HUBSPOT_CLIENT_SECRET,
    HUBSPOT_API_URL: hubspotServer.url,
    HUBSPOT_AUTHORIZE_URL: `${hubspotServer.url}/oauth/authorize`,
  });
  const routers = hubspotProvider.routes(
    { appUrl: base, hubspot: hubspotConfig } as Parameters<typeof hubspotProvider.routes>[0],
    {
      storage: providerStorage(redis, new Keys(prefix), new SecretBox(randomBytes(32))),
      states: new OAuthStateStore(randomBytes(32), { secureCookies: false }),
      installations: { get: async () => null } as never,
      logger: { info() {}, warn() {}, error() {}, debug() {} } as never,
      cards,
      installed: async () => {},
      crmChanged: async () => {},
    },
  );
  for (const router of routers) app.use(router);
});

afterEach(() => {
  hubspot.signInAs();
  recorded.reads.length = 0;
  recorded.decisions.length = 0;
  recorded.requests.length = 0;
});

afterAll(async () => {
  await close();
  await hubspotServer.close();
  await deleteByPattern(redis, `${prefix}:*`);
  await closeRedis(redis);
});

/** A request as `hubspot.fetch` sends it: the URL, the body and the time signed with the app's secret. */
async function signedByHubSpot(path: string, method: 'GET' | 'POST', body?: unknown) {
  const url = `${base}${path}`;
  const raw = body === undefined ? '' : JSON.stringify(body);
  const at = String(Date.now());
  const res = await fetch(url, {
    method,
    headers: {
      'content-type': 'application/json',
      'x-hubspot-request-timestamp': at,
      'x-hubspot-signature-v3': computeHubSpotSignatureV3(LOCAL_HUBSPOT_CLIENT_SECRET, method, url, raw, at),
    },
    ...(raw ? { body: raw } : {}),
  });
  return { status: res.status, text: await res.text() };
}

/** The card's action page, then HubSpot's sign-in as `jar`'s browser: the callback's answer. */
async function signIn(jar: CookieJar, portalId: string, companyId: string) {
  const act = await jar.fetch(`${base}/oauth/hubspot-card/act?portalId=${portalId}&companyId=${companyId}`);
  expect(act.status).toBe(200);
  const href = /href="([^"]+)"/.exec(await act.text())?.[1]?.replace(/&#38;/g, '&');
  expect(href).toBeDefined();
  const signInRes = await jar.fetch(`${base}${href}`);
  expect(signInRes.status).toBe(302);
  const consent = await jar.fetch(signInRes.headers.get('location')!);
  if (consent.status !== 302) return consent;
  const callback = consent.headers.get('location')!;
  expect(callback.startsWith(`${base}/oauth/hubspot-card/callback?`)).toBe(true);
  return jar.fetch(callback);
}

function post(jar: CookieJar, form: Record<string, string>) {
  return jar.fetch(`${base}/oauth/hubspot-card/act`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(base).origin },
    body: new URLSearchParams(form).toString(),
  });
}

describe("a request signed for one portal that names another gets neither the other's data nor a change", () => {
  it('a hubspot.fetch request naming portal B and a user of its choosing reads nothing of B and changes nothing', async () => {
    // Signed with the app's one secret, as HubSpot signs every portal's card requests alike: the portal and the
    // user in the URL are whatever the card that sent it wrote there.
    const query = `?portalId=${PORTAL_B}&userId=666`;
    const read = await signedByHubSpot(`/cards/hubspot/companies/${REVIEW_COMPANY}${query}`, 'GET');
    expect(read.status).not.toBe(200);
    expect(read.text).not.toContain('acme-gmbh');
    const decided = await signedByHubSpot(
      `/cards/hubspot/companies/${REVIEW_COMPANY}/decision${query}`,
      'POST',
      {
        action: 'accept',
        slug: 'acme-gmbh',
      },
    );
    expect(decided.status).not.toBe(200);
    const requested = await signedByHubSpot(
      `/cards/hubspot/companies/${NO_MATCH_COMPANY}/request${query}`,
      'POST',
      {},
    );
    expect(requested.status).not.toBe(200);
    expect(recorded.reads).toEqual([]);
    expect(recorded.decisions).toEqual([]);
    expect(recorded.requests).toEqual([]);
  });

  it("a user HubSpot signed in to portal A who names portal B is refused before B's company is read", async () => {
    hubspot.signInAs({ userId: '91', email: 'a-user@example.test', hubId: PORTAL_A });
    const jar = new CookieJar();
    const res = await signIn(jar, PORTAL_B, REVIEW_COMPANY);
    expect(res.status).toBe(403);
    const text = await res.text();
    expect(text).toContain('another HubSpot account');
    expect(text).not.toContain('acme-gmbh');
    expect(jar.has('rc_hubspot_card')).toBe(false);
    // No session: a post changes nothing.
    expect((await post(jar, { action: 'accept', slug: 'acme-gmbh' })).status).toBe(401);
    expect(recorded.reads).toEqual([]);
    expect(recorded.decisions).toEqual([]);
  });
});

describe("a user's own right to edit the company", () => {
  const VIEW_ONLY = HUBSPOT_SCOPES.filter((s) => s.endsWith('.read') || s === 'oauth');

  it('a user who may only view companies is stopped at HubSpot and nothing is read or changed', async () => {
    hubspot.signInAs({ userId: '92', email: 'viewer@example.test' }, VIEW_ONLY);
    const jar = new CookieJar();
    const res = await signIn(jar, PORTAL_B, REVIEW_COMPANY);
    expect(res.status).toBe(403);
    expect(jar.has('rc_hubspot_card')).toBe(false);
    expect((await post(jar, { action: 'reject' })).status).toBe(401);
    expect((await post(jar, { action: 'request' })).status).toBe(401);
    expect(recorded.reads).toEqual([]);
    expect(recorded.decisions).toEqual([]);
    expect(recorded.requests).toEqual([]);
  });

  it('a token without the companies write scope is refused by the connector itself', async () => {
    const jar = new CookieJar();
    const act = await jar.fetch(
      `${base}/oauth/hubspot-card/sign-in?portalId=${PORTAL_B}&companyId=${REVIEW_COMPANY}`,
    );
    const state = new URL(act.headers.get('location')!).searchParams.get('state')!;
    const code = hubspot.issueAuthCode({
      redirectUri: `${base}/oauth/hubspot-card/callback`,
      scopes: VIEW_ONLY,
      user: { userId: '93', email: 'viewer@example.test', hubId: PORTAL_B },
    });
    const res = await jar.fetch(
      `${base}/oauth/hubspot-card/callback?code=${code}&state=${encodeURIComponent(state)}`,
    );
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('may not edit companies');
    expect(recorded.reads).toEqual([]);
  });
});

describe('a user HubSpot proved acts in their own name', () => {
  it('accepts a candidate: the decision names the signed-in user, then the session is spent', async () => {
    hubspot.signInAs({ userId: '4242', email: 'seller@example.test' });
    const jar = new CookieJar();
    const page = await signIn(jar, PORTAL_B, REVIEW_COMPANY);
    expect(page.status).toBe(200);
    const text = await page.text();
    expect(text).toContain('Acme GmbH');
    expect(text).toContain('value="acme-gmbh"');
    expect(jar.has('rc_hubspot_card')).toBe(true);
    const done = await post(jar, { action: 'accept', slug: 'acme-gmbh' });
    expect(done.status).toBe(200);
    expect(recorded.decisions).toEqual([
      {
        installationId: installationB.id,
        recordId: REVIEW_COMPANY,
        decision: { action: 'accept', slug: 'acme-gmbh' },
        by: { kind: 'crm-user', id: '4242' },
      },
    ]);
    expect((await post(jar, { action: 'reject' })).status).toBe(401);
    expect(recorded.decisions).toHaveLength(1);
  });

  it('requests a report for a company without a match', async () => {
    hubspot.signInAs({ userId: '4243', email: 'seller2@example.test' });
    const jar = new CookieJar();
    const page = await signIn(jar, PORTAL_B, NO_MATCH_COMPANY);
    expect(await page.text()).toContain('Request a report');
    expect((await post(jar, { action: 'request' })).status).toBe(200);
    expect(recorded.requests).toEqual([
      { installationId: installationB.id, recordId: NO_MATCH_COMPANY, by: { kind: 'crm-user', id: '4243' } },
    ]);
  });

  it("refuses a session cookie posted from another site's form, and a forged cookie", async () => {
    const jar = new CookieJar();
    await signIn(jar, PORTAL_B, REVIEW_COMPANY);
    const cross = await jar.fetch(`${base}/oauth/hubspot-card/act`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
      body: 'action=reject',
    });
    expect(cross.status).toBe(401);
    const forged = await fetch(`${base}/oauth/hubspot-card/act`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: 'rc_hubspot_card=v1.a.b.c' },
      body: 'action=reject',
    });
    expect(forged.status).toBe(401);
    expect(recorded.decisions).toEqual([]);
  });

  it('the page the card opens may be framed by HubSpot only; the others by no one', async () => {
    const act = await fetch(
      `${base}/oauth/hubspot-card/act?portalId=${PORTAL_B}&companyId=${REVIEW_COMPANY}`,
    );
    expect(act.headers.get('content-security-policy')).toContain('frame-ancestors https://app.hubspot.com');
    const jar = new CookieJar();
    const page = await signIn(jar, PORTAL_B, REVIEW_COMPANY);
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  });

  it("keeps the portal's card budget: 30 actions a minute, then 429 with Retry-After, nothing done", async () => {
    // Earlier tests of this file acted for portal B within the same minute: they count too.
    while (actionsDone < CARD_REQUESTS_PER_MINUTE) {
      const jar = new CookieJar();
      await signIn(jar, PORTAL_B, NO_MATCH_COMPANY);
      expect((await post(jar, { action: 'request' })).status).toBe(200);
    }
    const jar = new CookieJar();
    await signIn(jar, PORTAL_B, NO_MATCH_COMPANY);
    const over = await post(jar, { action: 'request' });
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(actionsDone).toBe(CARD_REQUESTS_PER_MINUTE);
  });
});
