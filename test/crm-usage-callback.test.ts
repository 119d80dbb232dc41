import nock from 'nock';
import { afterEach, describe, expect, it } from 'vitest';
import { hubspotProvider } from '../connectors/hubspot/index.js';
import {
  HUBSPOT_DEFAULT_API_VERSION,
  HUBSPOT_RATE_HEADERS,
  hubspotPaths,
} from '../connectors/hubspot/provider.js';
import { salesforceProvider } from '../connectors/salesforce/index.js';
import { createLocalSalesforce } from '../connectors/salesforce/local/index.js';
import { CrmUsageStore, crmUsageKey } from '../src/app/crm-usage.js';
import type { AccessTokenSource } from '../src/auth/token-manager.js';
import type { ApiUsage } from '../src/crm/connector.js';
import type { Installation } from '../src/installations/store.js';
import { Keys } from '../src/storage/keys.js';
import { fixedTokens, openGate } from './support/local-salesforce-connector.js';
import { redisWithFreshPrefixes } from './support/redis-prefixes.js';
import { localSalesforceConfig } from './support/salesforce-config.js';
import { waitFor } from './support/wait.js';

/**
 * A connector tells the `onUsage` it was built with (ConnectorInput.onUsage) each usage reading it takes from
 * the CRM's answers; the runtime's `onUsage` keeps it in Redis, where the admin page of any process reads it.
 * Built through each provider, as the runtime builds them.
 */

const APP_URL = 'https://connector.test';
const noAppToken = (): AccessTokenSource => {
  throw new Error('no app token in this test');
};

const running: { close(): Promise<void> }[] = [];
afterEach(async () => {
  nock.cleanAll();
  await Promise.all(running.splice(0).map((s) => s.close()));
});

describe("a connector's onUsage", () => {
  it('HubSpot: told the reading of an answer with rate-limit headers, and nothing for one without', async () => {
    const api = 'https://api.hubspot.test';
    const companies = hubspotPaths(HUBSPOT_DEFAULT_API_VERSION).companies;
    const readings: ApiUsage[] = [];
    const connector = hubspotProvider.createConnector({
      config: { appUrl: APP_URL, hubspot: hubspotProvider.readConfig({ HUBSPOT_API_URL: api }) },
      installation: { id: 'hubspot:1', crm: 'hubspot', externalId: '1', status: 'connected' } as Installation,
      tokens: { current: async () => 'token', refreshAfterRejection: async () => 'token' },
      appToken: noAppToken,
      gate: openGate,
      urgent: true,
      kept: (make) => make(),
      onUsage: (reading) => readings.push(reading),
    });
    const withHeaders = nock(api)
      .get(companies)
      .query(true)
      .reply(
        200,
        { results: [] },
        { [HUBSPOT_RATE_HEADERS.daily]: '250000', [HUBSPOT_RATE_HEADERS.dailyRemaining]: '249000' },
      );
    await connector.listCompanies(null);
    expect(withHeaders.isDone()).toBe(true);
    expect(readings).toEqual([connector.apiUsage()]);
    expect(readings[0]).toMatchObject({ used: 1000, limit: 250000 });

    const without = nock(api).get(companies).query(true).reply(200, { results: [] });
    await connector.listCompanies(null);
    expect(without.isDone()).toBe(true);
    expect(readings).toHaveLength(1);
  });

  it('Salesforce: told the daily usage of the responses that carry Sforce-Limit-Info', async () => {
    const local = createLocalSalesforce({ dailyApiLimit: 5000 });
    const server = await local.listen();
    running.push(server);
    local.setApiUsage(40);
    const readings: ApiUsage[] = [];
    const connector = salesforceProvider.createConnector({
      config: localSalesforceConfig(APP_URL, local, server.url),
      installation: {
        id: `salesforce-${local.orgId}`,
        crm: 'salesforce',
        externalId: local.orgId,
        instanceUrl: server.url,
        status: 'connected',
      } as Installation,
      tokens: fixedTokens(local),
      appToken: noAppToken,
      gate: openGate,
      urgent: true,
      kept: (make) => make(),
      onUsage: (reading) => readings.push(reading),
    });
    await connector.ensureFields();
    expect(readings.length).toBeGreaterThan(0);
    expect(readings.at(-1)).toEqual(connector.apiUsage());
    expect(readings.at(-1)).toMatchObject({ used: local.apiUsage().used, limit: 5000 });
  });
});

describe("the runtime's onUsage (crm-usage.ts)", () => {
  const { redis, freshPrefix } = redisWithFreshPrefixes('crm-usage');
  const first: ApiUsage = { summary: '1,000 of 250,000 daily calls used', used: 1000, limit: 250_000 };
  const second: ApiUsage = { summary: '1,200 of 250,000 daily calls used', used: 1200, limit: 250_000 };

  it('keeps the reading under the installation for three days, with when it was seen', async () => {
    const keys = new Keys(freshPrefix());
    const usage = new CrmUsageStore(redis(), keys);
    usage.recorder('inst-1', () => Date.parse('2026-11-29T12:00:00Z'))(first);
    await waitFor('the reading stored', async () => (await usage.last('inst-1')) ?? undefined);
    // The stored form deployments already hold: the usage and `at`, as JSON.
    expect(JSON.parse((await redis().get(crmUsageKey(keys, 'inst-1')))!)).toEqual({
      ...first,
      at: '2026-11-29T12:00:00.000Z',
    });
    expect(await redis().ttl(crmUsageKey(keys, 'inst-1'))).toBeGreaterThan(3 * 24 * 3600 - 60);
  });

  it('writes a burst once at once and its last reading once the few seconds are over', async () => {
    const keys = new Keys(freshPrefix());
    const t0 = Date.parse('2026-11-29T12:00:00Z');
    let now = t0;
    const usage = new CrmUsageStore(redis(), keys);
    const onUsage = usage.recorder('inst-1', () => now);
    const stored = async () => (await usage.last('inst-1'))?.used;
    onUsage(first);
    await waitFor('the first reading', async () => ((await stored()) === first.used ? true : undefined));
    now = t0 + 4_990;
    onUsage(second);
    // A write would have gone out before this read, on the same connection.
    expect(await stored()).toBe(first.used);
    now = t0 + 5_000;
    await waitFor('the last reading', async () => ((await stored()) === second.used ? true : undefined));
  });
});
