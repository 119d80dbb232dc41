import { randomBytes, randomUUID } from 'node:crypto';
import express from 'express';
import type { Redis } from 'ioredis';
import nock from 'nock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHubSpotConnector, staticAccessToken } from '../connectors/hubspot/create-connector.js';
import {
  createLocalHubSpot,
  LOCAL_HUBSPOT_CLIENT_ID,
  LOCAL_HUBSPOT_CLIENT_SECRET,
  type LocalHubSpot,
  type LocalHubSpotServer,
} from '../connectors/hubspot/local/index.js';
import { LOCAL_PERSON_SOURCE_ID } from '../connectors/hubspot/local/local-hubspot.js';
import { exchangeHubSpotCode } from '../connectors/hubspot/oauth/oauth-tokens.js';
import { ensureHubSpotPrivateAppInstallation } from '../connectors/hubspot/oauth/token-install.js';
import { HUBSPOT_DEFAULT_API_VERSION, hubspotPaths } from '../connectors/hubspot/provider.js';
import { createHubSpotWebhookRouter } from '../connectors/hubspot/webhooks/webhook-routes.js';
import type { CrmChange } from '../src/crm/connector.js';
import { InstallationStore } from '../src/installations/store.js';
import { closeRedis, createRedis, waitForRedis } from '../src/redis.js';
import { SecretBox } from '../src/util/secretbox.js';
import { type LoopbackServer, listenOnLoopback } from './support/loopback-server.js';
import { REDIS_URL } from './support/redis-url.js';

/** The date-versioned paths the connector calls by default. */
const P = hubspotPaths(HUBSPOT_DEFAULT_API_VERSION);

const PRIVATE_TOKEN = 'pat-local-test';
let now = Date.UTC(2026, 10, 21, 9, 0, 0);
let hubspot: LocalHubSpot;
let server: LocalHubSpotServer;
let webhookServer: LoopbackServer;
let webhookUrl: string;
const received: { portalId: string; changes: CrmChange[] }[] = [];

async function call(path: string, init: RequestInit & { token?: string } = {}) {
  const res = await fetch(`${server.url}${path}`, {
    ...init,
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${init.token ?? PRIVATE_TOKEN}`,
      ...(init.headers as Record<string, string> | undefined),
    },
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  nock.enableNetConnect();
  const app = express();
  webhookServer = await listenOnLoopback(app);
  webhookUrl = `${webhookServer.url}/webhooks/hubspot`;
  app.use(
    createHubSpotWebhookRouter({
      clientSecret: LOCAL_HUBSPOT_CLIENT_SECRET,
      publicUrl: new URL(webhookUrl).origin,
      onChanges: async (portalId, changes) => {
        received.push({ portalId, changes });
      },
      now: () => now,
    }),
  );
  hubspot = createLocalHubSpot({
    privateAppToken: PRIVATE_TOKEN,
    accessTokenTtlMs: 60_000,
    webhookUrl,
    now: () => now,
  });
  server = await hubspot.listen();
  await createHubSpotConnector({
    apiUrl: server.url,
    tokens: staticAccessToken(PRIVATE_TOKEN),
  }).ensureFields();
});

afterAll(async () => {
  await server.close();
  await webhookServer.close();
});

describe('local HubSpot', () => {
  it('answers 401 for unknown tokens and for tokens past their lifetime', async () => {
    expect((await call(P.accountDetails, { token: 'nope' })).status).toBe(401);
    const grant = await exchangeHubSpotCode(
      {
        apiUrl: server.url,
        clientId: LOCAL_HUBSPOT_CLIENT_ID,
        clientSecret: LOCAL_HUBSPOT_CLIENT_SECRET,
        now: () => now,
      },
      hubspot.issueAuthCode(),
      'http://app.test/cb',
    );
    expect((await call(P.accountDetails, { token: grant.tokens.accessToken })).status).toBe(200);
    now += 60_001;
    const expired = await call(P.accountDetails, { token: grant.tokens.accessToken });
    expect(expired.status).toBe(401);
    expect(expired.body).toMatchObject({ category: 'EXPIRED_AUTHENTICATION' });
    now += 10_000;
  });

  it('refuses token requests whose parameters are not form-encoded in the body', async () => {
    const res = await fetch(`${server.url}${P.token}?client_secret=x`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', client_id: LOCAL_HUBSPOT_CLIENT_ID }),
    });
    expect(res.status).toBe(400);
    const json = await fetch(`${server.url}${P.token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'refresh_token' }),
    });
    expect(json.status).toBe(400);
  });

  it("enforces the per-portal budget with HubSpot's headers and TEN_SECONDLY_ROLLING body", async () => {
    hubspot.setRateLimit(3, 10_000);
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await call(P.accountDetails));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429]);
    expect(answers.map((a) => a.headers.get('x-hubspot-ratelimit-remaining'))).toEqual(['2', '1', '0', '0']);
    expect(answers[0]!.headers.get('x-hubspot-ratelimit-max')).toBe('3');
    expect(answers[0]!.headers.get('x-hubspot-ratelimit-interval-milliseconds')).toBe('10000');
    expect(answers[3]!.body).toMatchObject({ policyName: 'TEN_SECONDLY_ROLLING', errorType: 'RATE_LIMIT' });
    now += 10_001;
    expect((await call(P.accountDetails)).status).toBe(200);
    hubspot.setRateLimit(1000, 10_000);
  });

  it('answers 409 with OBJECT_ALREADY_EXISTS for an existing property and 400 for an invalid option', async () => {
    const group = { name: 'g1', label: 'G1' };
    expect(
      (await call(P.companyPropertyGroups, { method: 'POST', body: JSON.stringify(group) })).status,
    ).toBe(201);
    const property = {
      name: 'tier',
      label: 'Tier',
      type: 'enumeration',
      fieldType: 'select',
      groupName: 'g1',
      options: [{ label: 'Gold', value: 'gold' }],
    };
    expect((await call(P.companyProperties, { method: 'POST', body: JSON.stringify(property) })).status).toBe(
      201,
    );
    const again = await call(P.companyProperties, {
      method: 'POST',
      body: JSON.stringify(property),
    });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ status: 'error', category: 'OBJECT_ALREADY_EXISTS' });

    const [c] = hubspot.seedCompanies(1);
    const bad = await call(P.companiesBatchUpdate, {
      method: 'POST',
      body: JSON.stringify({ inputs: [{ id: c!.id, properties: { tier: 'silver' } }] }),
    });
    expect(bad.status).toBe(400);
    expect(String(bad.body.message)).toContain('INVALID_OPTION');
  });

  it('answers a batch update with 207 for missing ids, records history and counts writes that changed nothing', async () => {
    const [a, b] = hubspot.seedCompanies([{ name: 'A' }, { name: 'B' }]);
    await hubspot.deleteCompany(b!.id);
    hubspot.resetStats();
    const body = JSON.stringify({
      inputs: [
        { id: a!.id, properties: { name: 'A2' } },
        { id: b!.id, properties: { name: 'B2' } },
        { id: '999999999', properties: { name: 'C' } },
      ],
    });
    const res = await call(P.companiesBatchUpdate, { method: 'POST', body });
    expect(res.status).toBe(207);
    expect(res.body.errors).toEqual([
      expect.objectContaining({ category: 'OBJECT_NOT_FOUND', context: { ids: [b!.id, '999999999'] } }),
    ]);
    expect((res.body.results as { id: string }[]).map((r) => r.id)).toEqual([a!.id]);
    await call(P.companiesBatchUpdate, {
      method: 'POST',
      body: JSON.stringify({ inputs: [{ id: a!.id, properties: { name: 'A2' } }] }),
    });
    expect(hubspot.stats().writes).toMatchObject({ batches: 2, records: 2, unchangedRecords: 1 });
    expect(
      hubspot.getCompany(a!.id)?.history.map((h) => [h.property, h.previous, h.value, h.source]),
    ).toEqual([
      ['name', '', 'A', 'seed'],
      ['name', 'A', 'A2', 'api'],
    ]);
  });

  it('injects 5xx and DAILY faults', async () => {
    hubspot.injectFaults({ failNext: 2, failStatus: 502 });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await call(P.accountDetails)).status);
    expect(statuses).toEqual([502, 502, 200]);
    hubspot.injectFaults({ dailyLimitExceeded: true });
    const daily = await call(P.accountDetails);
    expect(daily.status).toBe(429);
    expect(daily.body).toMatchObject({ policyName: 'DAILY' });
    hubspot.clearFaults();
  });

  it("sends a person's edits, deletions and merges as signed v3 webhooks the receiver accepts", async () => {
    const [a, b, c] = hubspot.seedCompanies(3);
    received.length = 0;
    const slug = await hubspot.setCompanyProperty(a!.id, 'report_slug', 'acme', { notify: true });
    expect(slug.properties.report_slug).toBe('acme');
    await hubspot.deleteCompany(c!.id, { notify: true });
    await hubspot.mergeCompanies(a!.id, b!.id, { notify: true });
    expect(received.map((r) => r.changes)).toEqual([
      // The person who made the change, as HubSpot's sourceId names them (the decision log records it).
      [{ kind: 'slugChanged', recordId: a!.id, slug: 'acme', by: LOCAL_PERSON_SOURCE_ID }],
      [{ kind: 'deleted', recordId: c!.id }],
      [{ kind: 'merged', recordId: a!.id, mergedInto: a!.id, mergedIds: [b!.id] }],
    ]);
    expect(received.every((r) => r.portalId === hubspot.portalId)).toBe(true);
    expect(hubspot.getCompany(b!.id)?.mergedInto).toBe(a!.id);
  });

  it('serves the connector end to end with a private-app token, daily headers included', async () => {
    const redis: Redis = createRedis(REDIS_URL, 'producer');
    await waitForRedis(redis);
    const prefix = `rc-test-${randomUUID()}`;
    try {
      const store = new InstallationStore(redis, new SecretBox(randomBytes(32)), prefix);
      const installation = await ensureHubSpotPrivateAppInstallation(
        { apiUrl: server.url, accessToken: PRIVATE_TOKEN },
        store,
      );
      expect(installation).toMatchObject({
        id: `hubspot-${hubspot.portalId}`,
        mode: 'token',
        externalId: hubspot.portalId,
      });
      expect(await store.getTokens(installation.id)).toEqual({ accessToken: PRIVATE_TOKEN });

      const connector = createHubSpotConnector({
        apiUrl: server.url,
        tokens: staticAccessToken(PRIVATE_TOKEN),
      });
      const [target] = hubspot.seedCompanies([{ name: 'Search me' }]);
      await hubspot.setCompanyProperty(target!.id, 'report_slug', 'needle');
      const found = await connector.findBySlug('needle');
      expect(found.map((r) => r.id)).toEqual([target!.id]);
      await connector.listCompanies(null);
      expect(connector.apiUsage()?.summary).toMatch(/daily calls used/);
    } finally {
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length > 0) await redis.del(...keys);
      await closeRedis(redis);
    }
  });
});

describe('date-versioned API paths', () => {
  it('answers the numbered paths with 404 and counts them, so a test can prove nothing calls them', async () => {
    hubspot.resetStats();
    for (const path of [
      '/crm/v3/objects/companies',
      '/account-info/v3/details',
      '/crm/v4/objects/companies',
    ]) {
      expect((await call(path)).status).toBe(404);
    }
    const oauth = await fetch(`${server.url}/oauth/v1/token`, { method: 'POST' });
    expect(oauth.status).toBe(404);
    expect(hubspot.stats().calls.legacy).toBe(4);
    // The same endpoints in both supported date versions answer.
    for (const version of ['2026-03', '2026-09'] as const) {
      expect((await call(hubspotPaths(version).accountDetails)).status).toBe(200);
    }
  });

  it('refuses a batch read without propertiesWithHistory, which the published spec requires', async () => {
    const [company] = hubspot.seedCompanies(1);
    const bad = await call(P.companiesBatchRead, {
      method: 'POST',
      body: JSON.stringify({ properties: ['name'], inputs: [{ id: company!.id }] }),
    });
    expect(bad.status).toBe(400);
    const good = await call(P.companiesBatchRead, {
      method: 'POST',
      body: JSON.stringify({
        properties: ['name'],
        propertiesWithHistory: [],
        inputs: [{ id: company!.id }],
      }),
    });
    expect(good.status).toBe(200);
  });

  it('refuses a search without sorts, which the 2026-03 spec marks required', async () => {
    const search = (body: Record<string, unknown>) =>
      call(P.companiesSearch, {
        method: 'POST',
        body: JSON.stringify({ filterGroups: [], properties: ['name'], limit: 10, ...body }),
      });
    expect((await search({})).status).toBe(400);
    expect((await search({ sorts: ['hs_object_id'] })).status).toBe(200);
  });

  it('2026-09: a record the portal rules refuse fails alone, as a record error; 2026-03 does not check', async () => {
    const local = createLocalHubSpot({ privateAppToken: PRIVATE_TOKEN, timeZone: 'Europe/Berlin' });
    const srv = await local.listen();
    try {
      const connectorFor = (apiVersion: '2026-03' | '2026-09') =>
        createHubSpotConnector({ apiUrl: srv.url, apiVersion, tokens: staticAccessToken(PRIVATE_TOKEN) });
      await connectorFor('2026-09').ensureFields();
      const [withIndustry, without] = local.seedCompanies([
        { name: 'Has Industry', industry: 'Energy' },
        { name: 'No Industry' },
      ]);
      local.requireProperty('industry');
      const updates = [withIndustry!, without!].map((c) => ({ id: c.id, values: { score: 42 } }));

      const results = await connectorFor('2026-09').writeCompanies(updates);
      expect(results[0]).toEqual({ id: withIndustry!.id, ok: true });
      expect(results[1]).toMatchObject({
        id: without!.id,
        ok: false,
        error: { code: 'INVALID_VALUE', providerCode: 'VALIDATION_ERROR' },
      });
      expect(results[1]!.ok === false && results[1]!.error.message).toMatch(/industry is required/);
      expect(local.getCompany(without!.id)!.properties.report_score).toBeUndefined();
      expect(local.getCompany(withIndustry!.id)!.properties.report_score).toBe('42');

      expect(await connectorFor('2026-03').writeCompanies(updates)).toEqual([
        { id: withIndustry!.id, ok: true },
        { id: without!.id, ok: true },
      ]);
    } finally {
      await srv.close();
    }
  });
});

describe('alert notes', () => {
  it("associate with the type the portal's labels API names, read once per connector", async () => {
    const portal = createLocalHubSpot({ privateAppToken: PRIVATE_TOKEN, noteToCompanyTypeId: 214 });
    const listening = await portal.listen();
    try {
      const connector = createHubSpotConnector({
        apiUrl: listening.url,
        tokens: staticAccessToken(PRIVATE_TOKEN),
      });
      const [a, b] = portal.seedCompanies(2);
      const activity = {
        subject: 'Score fell',
        body: 'The overall score dropped',
        at: new Date().toISOString(),
      };
      await connector.createActivity(a!.id, activity);
      await connector.createActivity(b!.id, activity);
      expect(portal.notesFor(a!.id)).toHaveLength(1);
      expect(portal.notesFor(b!.id)).toHaveLength(1);
      expect(portal.stats().calls['associations.labels']).toBe(1);
    } finally {
      await listening.close();
    }
  });
});
