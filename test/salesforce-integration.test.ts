import { randomBytes, randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SalesforceUsageTracker } from '../connectors/salesforce/api/usage.js';
import { createSalesforceConnector } from '../connectors/salesforce/connector.js';
import { createLocalSalesforce } from '../connectors/salesforce/local/index.js';
import { createSalesforceOAuthRouter } from '../connectors/salesforce/oauth/oauth-routes.js';
import { createSalesforceTokenRefresher } from '../connectors/salesforce/oauth/token-refresher.js';
import { SALESFORCE_LIMITS } from '../connectors/salesforce/provider.js';
import { OAuthStateStore } from '../src/auth/oauth-state.js';
import { TokenManager } from '../src/auth/token-manager.js';
import type { Config } from '../src/config.js';
import type { CompanyRecord, EnsureFieldsResult } from '../src/crm/connector.js';
import { type Installation, InstallationStore } from '../src/installations/store.js';
import { createLogger } from '../src/log.js';
import { RedisRateGate } from '../src/ratelimit/redis-gate.js';
import { closeRedis, createRedis, waitForRedis } from '../src/redis.js';
import { SecretBox } from '../src/util/secretbox.js';
import { CookieJar } from './support/cookie-jar.js';
import { REDIS_URL } from './support/redis-url.js';
import { localSalesforceConfig } from './support/salesforce-config.js';

/**
 * End to end on a real Redis: an org installs through the OAuth routes (real HTTP, redirects followed by hand),
 * setup creates the fields and the permission set, then 1,000 Accounts are read in pages and written in
 * collections of 200, and the calls each step made are counted on the local Salesforce.
 */

const prefix = `rc-test-${randomUUID()}`;
// The org's clock runs with real time but can be moved forward, so the change poll can see writes settle.
let clockOffset = 0;
const local = createLocalSalesforce({ queryPageSize: 250, now: () => Date.now() + clockOffset });
const logger = createLogger('silent');
let redis: Redis;
let sf: { url: string; close(): Promise<void> };
let appServer: Server;
let appUrl: string;
let config: Pick<Config, 'appUrl' | 'salesforce'>;
let store: InstallationStore;
let manager: TokenManager;
const installs: { installation: Installation; fields: EnsureFieldsResult }[] = [];

function connectorFor(installation: Installation, usage?: SalesforceUsageTracker) {
  return createSalesforceConnector({
    installation,
    tokens: manager.source(installation.id),
    gate: new RedisRateGate(redis, `${prefix}:gate:${installation.id}`, {
      max: SALESFORCE_LIMITS.requestsPerWindow,
      windowMs: SALESFORCE_LIMITS.windowMs,
    }),
    config,
    ...(usage ? { usage } : {}),
  });
}

beforeAll(async () => {
  redis = createRedis(REDIS_URL, 'producer', 'salesforce-integration-test');
  await waitForRedis(redis);
  sf = await local.listen();
  const app = express();
  appServer = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => appServer.once('listening', resolve));
  appUrl = `http://127.0.0.1:${(appServer.address() as AddressInfo).port}`;
  config = localSalesforceConfig(appUrl, local, sf.url);
  const key = randomBytes(32);
  store = new InstallationStore(redis, new SecretBox(key), prefix);
  manager = new TokenManager(store, redis, { salesforce: createSalesforceTokenRefresher(config) });
  app.use(
    createSalesforceOAuthRouter({
      config,
      states: new OAuthStateStore(key, { secureCookies: false }),
      store,
      logger,
      onInstalled: async (installation) => {
        const fields = await connectorFor(installation).withPriority('urgent').ensureFields();
        installs.push({ installation, fields });
      },
    }),
  );
});

afterAll(async () => {
  await new Promise((resolve) => appServer.close(resolve));
  await sf.close();
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  await closeRedis(redis);
});

const browser = new CookieJar();
async function follow(url: string): Promise<Response> {
  return browser.fetch(url);
}

it('installs through OAuth, creates the fields, reads 1,000 Accounts in pages and writes them in collections of 200', async () => {
  // Install: app -> Salesforce authorize -> app callback, each redirect followed by hand.
  const install = await follow(`${appUrl}/oauth/salesforce/install`);
  expect(install.status).toBe(302);
  const consent = await follow(install.headers.get('location')!);
  expect(consent.status).toBe(302);
  const callback = consent.headers.get('location')!;
  expect(callback.startsWith(`${appUrl}/oauth/salesforce/callback?`)).toBe(true);
  const done = await follow(callback);
  expect(done.status).toBe(200);

  expect(installs).toHaveLength(1);
  const { installation, fields } = installs[0]!;
  expect(installation.externalId).toBe(local.orgId);
  expect(fields.created).toHaveLength(15);
  expect(fields.problems).toEqual([]);
  expect(local.customFieldNames()).toHaveLength(15);
  expect(local.isPermissionSetAssigned('Report_Connector')).toBe(true);
  expect(local.counters()).toEqual({
    'oauth.authorize': 1,
    'oauth.token': 1,
    // The install confirms the token's org with the identity URL.
    identity: 1,
    'chatter.users.me': 1,
    'soap.readMetadata': 2,
    'soap.upsertMetadata': 3,
    query: 1,
    'sobjects.PermissionSetAssignment': 1,
  });

  // Read: 1,000 Accounts, 250 per batch -> one query and three queryMore calls.
  local.seedAccounts(1000);
  // The poll reads the delete log only once its horizon is in a later minute than the baseline's (the log
  // ignores seconds): the org's clock goes to 5 s into a minute, so the steps below stay inside it. A run that
  // crossed a minute by chance made one getDeleted call more than counted below.
  clockOffset += 65_000 - ((Date.now() + clockOffset) % 60_000);
  local.resetCounters();
  const usage = new SalesforceUsageTracker({ pauseShare: config.salesforce.usagePauseShare });
  const connector = connectorFor((await store.get(installation.id))!, usage);
  const baseline = await connector.listChangedSince(null);
  const records: CompanyRecord[] = [];
  let cursor: string | null = null;
  do {
    const page = await connector.listCompanies(cursor);
    records.push(...page.records);
    cursor = page.nextCursor;
  } while (cursor);
  expect(records).toHaveLength(1000);
  expect(new Set(records.map((r) => r.id)).size).toBe(1000);
  // One of the queries is the poll baseline; the describe (once per org an hour) asks whether the org has
  // country picklists.
  expect(local.counters()).toEqual({ 'describe.Account': 1, query: 2, queryMore: 3 });

  // Write: collections of 200 -> five PATCH calls, every record ok.
  local.resetCounters();
  const results = [];
  for (let i = 0; i < records.length; i += connector.limits.writeBatchSize) {
    const batch = records.slice(i, i + connector.limits.writeBatchSize);
    results.push(
      ...(await connector.writeCompanies(
        batch.map((r, j) => ({
          id: r.id,
          values: {
            slug: `report-${i + j}`,
            score: (i + j) / 10,
            matchStatus: 'matched',
            syncedAt: '2026-01-01T00:00:00Z',
          },
        })),
      )),
    );
  }
  expect(results).toHaveLength(1000);
  expect(results.every((r) => r.ok)).toBe(true);
  expect(local.counters()).toEqual({ 'composite.sobjects': 5 });
  expect(local.getAccount(records[999]!.id)!.custom).toMatchObject({
    Report_Slug__c: 'report-999',
    Report_Score__c: 99.9,
  });

  // The poll sees the connector's own writes (the pipeline tells them from a person's by comparing values)
  // once their second is over.
  clockOffset += 3_000;
  local.resetCounters();
  const changed = await connector.listChangedSince(baseline.cursor);
  expect(changed.records).toHaveLength(1000);
  // queryAll: the same stream also carries deletions and merges (IsDeleted, MasterRecordId).
  expect(local.counters()).toEqual({ queryAll: 1, queryMore: 3 });

  expect(connector.apiUsage()).toMatchObject({ used: local.apiUsage().used, limit: local.apiUsage().limit });
  expect(local.apiVersionsSeen()).toEqual(['v63.0']);
});
