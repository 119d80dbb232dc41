import { randomBytes, randomUUID } from 'node:crypto';
import express from 'express';
import type { Redis } from 'ioredis';
import nock from 'nock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HubSpotConnector } from '../connectors/hubspot/connector.js';
import { createHubSpotConnector } from '../connectors/hubspot/create-connector.js';
import { HUBSPOT_FIELDS } from '../connectors/hubspot/fields/field-names.js';
import type { LocalHubSpot, LocalHubSpotServer } from '../connectors/hubspot/local/index.js';
import { createHubSpotOAuthRouter } from '../connectors/hubspot/oauth/oauth-routes.js';
import { createHubSpotTokenRefresher } from '../connectors/hubspot/oauth/oauth-tokens.js';
import { OAuthStateStore } from '../src/auth/oauth-state.js';
import { TokenManager } from '../src/auth/token-manager.js';
import type { CompanyRecord, EnsureFieldsResult, RecordUpdate } from '../src/crm/connector.js';
import { type Installation, InstallationStore } from '../src/installations/store.js';
import { RedisRateGate } from '../src/ratelimit/redis-gate.js';
import { closeRedis, createRedis, deleteByPattern, waitForRedis } from '../src/redis.js';
import { SecretBox } from '../src/util/secretbox.js';
import { CookieJar } from './support/cookie-jar.js';
import { startLocalHubSpot } from './support/local-hubspot.js';
import { type LoopbackServer, listenOnLoopback } from './support/loopback-server.js';
import { REDIS_URL } from './support/redis-url.js';

/**
 * The HubSpot side end to end, as the app will run it: install through the OAuth routes against the local
 * HubSpot, tokens sealed in a real Redis, TokenManager refreshing them, the Redis rate gate pacing, fields
 * created, 1,000 companies paged and written back in batches of 100, with the API calls counted.
 */

const prefix = `rc-test-${randomUUID()}`;
let redis: Redis;
let hubspot: LocalHubSpot;
let hubspotServer: LocalHubSpotServer;
let appServer: LoopbackServer;
let appUrl: string;
let tokens: TokenManager;
let store: InstallationStore;
const installed: Installation[] = [];
const fieldSetups: EnsureFieldsResult[] = [];

function connectorFor(installationId: string): HubSpotConnector {
  const limits = { max: 100, windowMs: 10_000 };
  return createHubSpotConnector({
    apiUrl: hubspotServer.url,
    tokens: tokens.source(installationId),
    gate: new RedisRateGate(redis, `${prefix}:gate:${installationId}`, limits),
  });
}

beforeAll(async () => {
  nock.enableNetConnect();
  redis = createRedis(REDIS_URL, 'producer');
  await waitForRedis(redis);
  store = new InstallationStore(redis, new SecretBox(randomBytes(32)), prefix);
  const local = await startLocalHubSpot({ timeZone: 'US/Eastern' });
  ({ hubspot, server: hubspotServer } = local);
  const oauth = local.oauth;
  tokens = new TokenManager(store, redis, { hubspot: createHubSpotTokenRefresher(oauth) });

  const app = express();
  appServer = await listenOnLoopback(app);
  appUrl = appServer.url;
  app.use(
    createHubSpotOAuthRouter({
      ...oauth,
      appUrl,
      authorizeUrl: `${hubspotServer.url}/oauth/authorize`,
      states: new OAuthStateStore(randomBytes(32), { secureCookies: false }),
      installations: store,
      // What the lead's code does on install: create the fields (then start the backfill).
      onInstalled: async (installation) => {
        installed.push(installation);
        // As the server does for a portal in INSTALL_ALLOWLIST: let it in, so the callback leads to the admin page.
        await store.approve(installation.id, 'allowlist');
        fieldSetups.push(await connectorFor(installation.id).ensureFields());
      },
    }),
  );
});

afterAll(async () => {
  await appServer.close();
  await hubspotServer.close();
  await deleteByPattern(redis, `${prefix}:*`);
  await closeRedis(redis);
});

describe('HubSpot connector against the local HubSpot', () => {
  it('installs, creates the fields, pages 1,000 companies and writes them back in batches of 100', async () => {
    hubspot.seedCompanies(1000);

    // Install: the app's redirect, the consent screen's redirect, the callback.
    const browser = new CookieJar();
    const install = await browser.fetch(`${appUrl}/oauth/hubspot/install`);
    const consent = await browser.fetch(install.headers.get('location')!);
    const done = await browser.fetch(consent.headers.get('location')!);
    expect(done.status).toBe(302);
    expect(done.headers.get('location')).toBe(`/admin?installed=hubspot-${hubspot.portalId}`);
    expect(installed).toHaveLength(1);
    const id = installed[0]!.id;
    expect(installed[0]!.timeZone).toBe('US/Eastern');
    expect(fieldSetups).toEqual([
      { created: HUBSPOT_FIELDS.map((f) => f.hubspot), existing: [], reconciled: [], problems: [] },
    ]);

    const connector = connectorFor(id);
    const seen: CompanyRecord[] = [];
    let cursor: string | null = null;
    do {
      const page = await connector.listCompanies(cursor);
      seen.push(...page.records);
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toHaveLength(1000);
    expect(new Set(seen.map((r) => r.id)).size).toBe(1000);
    expect(seen[0]).toMatchObject({
      name: expect.any(String),
      domain: expect.any(String),
      fields: { slug: null },
    });

    const scoredAt = '2026-11-20T08:30:00.000Z';
    const updates: RecordUpdate[] = seen.map((r, i) => ({
      id: r.id,
      values: {
        slug: `company-${i}`,
        score: 50 + i / 100,
        band: 'strong',
        scoredAt,
        matchStatus: 'matched',
        verifiedScore: null,
        syncedAt: '2026-11-21T10:00:00.000Z',
      },
    }));
    for (let i = 0; i < updates.length; i += connector.limits.writeBatchSize) {
      const results = await connector.writeCompanies(updates.slice(i, i + connector.limits.writeBatchSize));
      expect(results.filter((r) => !r.ok)).toEqual([]);
    }

    const stats = hubspot.stats();
    // Exactly these routes, so none on the numbered (`/v3/`) paths, which the stand-in counts as `legacy`.
    expect(stats.calls).toEqual({
      'oauth.authorize': 1,
      'oauth.token': 1,
      // At install, for who installed it (shown to the operator who approves a pending installation).
      'oauth.introspect': 1,
      // At install, for the portal's time zone (daily limits reset at its midnight).
      'account.details': 1,
      'properties.groups.create': 1,
      'properties.create': HUBSPOT_FIELDS.length,
      'companies.list': 10,
      'companies.batchUpdate': 10,
    });
    expect(stats.statuses['429']).toBeUndefined();
    expect(stats.statuses['401']).toBeUndefined();
    expect(stats.writes).toMatchObject({ batches: 10, records: 1000, unchangedRecords: 0 });

    const sample = hubspot.getCompany(seen[7]!.id)!;
    expect(sample.properties).toMatchObject({
      report_slug: 'company-7',
      report_score: '50.07',
      report_scored_at: scoredAt,
      report_match_status: 'matched',
    });
    expect(sample.properties.report_verified_score).toBeUndefined();
    expect(
      sample.history
        .filter((h) => h.source === 'api')
        .map((h) => h.property)
        .sort(),
    ).toEqual(
      [
        'report_band',
        'report_match_status',
        'report_score',
        'report_scored_at',
        'report_slug',
        'report_synced_at',
      ].sort(),
    );

    // Reading back gives the values as written.
    const back = await connector.readCompanies(seen.slice(0, 100).map((r) => r.id));
    expect(back).toHaveLength(100);
    expect(back[7]!.fields).toMatchObject({
      slug: 'company-7',
      score: 50.07,
      scoredAt,
      matchStatus: 'matched',
      verifiedScore: null,
    });
    expect(hubspot.stats().calls['companies.batchRead']).toBe(1);

    // Writing the same values again changes nothing: the stand-in counts it as wasted.
    hubspot.resetStats();
    await connector.writeCompanies(updates.slice(0, 100));
    expect(hubspot.stats().writes).toMatchObject({ records: 100, unchangedRecords: 100 });
  });

  it('refreshes an expired access token once through the TokenManager and carries on', async () => {
    const id = installed[0]!.id;
    const connector = connectorFor(id);
    hubspot.expireAccessTokens();
    hubspot.resetStats();
    const page = await connector.listCompanies(null);
    expect(page.records).toHaveLength(100);
    expect(hubspot.stats().calls).toMatchObject({ 'companies.list': 2, 'oauth.token': 1 });
    expect(hubspot.stats().statuses['401']).toBe(1);
  });

  it('finds existing fields on a second setup and reconciles nothing', async () => {
    hubspot.resetStats();
    const result = await connectorFor(installed[0]!.id).ensureFields();
    expect(result).toEqual({
      created: [],
      existing: HUBSPOT_FIELDS.map((f) => f.hubspot),
      reconciled: [],
      problems: [],
    });
    expect(hubspot.stats().calls).toMatchObject({
      'properties.create': HUBSPOT_FIELDS.length,
      'properties.read': HUBSPOT_FIELDS.length,
    });
  });

  it('keeps 429s rare under a tight budget and waits out the one it gets', async () => {
    const connector = connectorFor(installed[0]!.id);
    hubspot.setRateLimit(12, 1_000);
    hubspot.resetStats();
    for (let i = 0; i < 30; i++) await connector.listCompanies(null);
    // The Remaining header steers the pace: the budget runs low, the connector holds off, no 429.
    expect(hubspot.stats().statuses['429']).toBeUndefined();

    hubspot.injectFaults({ rateLimitNext: 1 });
    hubspot.resetStats();
    await connector.listCompanies(null);
    expect(hubspot.stats().statuses).toMatchObject({ '429': 1, '200': 1 });
    hubspot.setRateLimit(110, 10_000);
  });
});
