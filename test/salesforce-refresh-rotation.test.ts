import { randomBytes, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readSalesforceConfig } from '../connectors/salesforce/config.js';
import { createSalesforceConnector } from '../connectors/salesforce/connector.js';
import { createLocalSalesforce, type LocalSalesforce } from '../connectors/salesforce/local/index.js';
import { createSalesforceTokenRefresher } from '../connectors/salesforce/oauth/token-refresher.js';
import { DEFAULT_API_VERSION } from '../connectors/salesforce/provider.js';
import { RefreshRejectedError, TokenManager } from '../src/auth/token-manager.js';
import type { Config } from '../src/config.js';
import { OPEN_GATE } from '../src/crm/request-gate.js';
import { type Installation, InstallationStore } from '../src/installations/store.js';
import { crmKind } from '../src/providers.js';
import { closeRedis, createRedis, waitForRedis } from '../src/redis.js';
import { SecretBox } from '../src/util/secretbox.js';
import { REDIS_URL } from './support/redis-url.js';
import { localSalesforceConfig } from './support/salesforce-config.js';

/**
 * The local Salesforce rotates refresh tokens as an External Client App with refresh token rotation does: each
 * refresh answers a new refresh token, the old one is spent, and a spent one presented again revokes the whole
 * chain. Two processes (two TokenManagers, each on its own Redis connection) refreshing one org at once must
 * leave it connected: the refresh lock lets one refresh and the other take its tokens. And the API versions the
 * local org serves, with the connector's default.
 */

let redisA: Redis;
let redisB: Redis;
let prefix: string;
let local: LocalSalesforce;
let sf: { url: string; close(): Promise<void> };
let config: Pick<Config, 'appUrl' | 'salesforce'>;
let storeA: InstallationStore;
let storeB: InstallationStore;

beforeAll(async () => {
  redisA = createRedis(REDIS_URL, 'producer', 'salesforce-rotation-a');
  redisB = createRedis(REDIS_URL, 'producer', 'salesforce-rotation-b');
  await Promise.all([waitForRedis(redisA), waitForRedis(redisB)]);
});

beforeEach(async () => {
  prefix = `rc-test-${randomUUID()}`;
  local = createLocalSalesforce();
  sf = await local.listen();
  config = localSalesforceConfig('http://127.0.0.1:1', local, sf.url);
  const box = new SecretBox(randomBytes(32));
  storeA = new InstallationStore(redisA, box, prefix);
  storeB = new InstallationStore(redisB, box, prefix);
});

afterEach(async () => {
  await sf.close();
  const keys = await redisA.keys(`${prefix}:*`);
  if (keys.length > 0) await redisA.del(...keys);
});

afterAll(async () => {
  await closeRedis(redisA, redisB);
});

/** An OAuth installation as the callback leaves it, let in. */
async function installed(): Promise<Installation> {
  const inst = await storeA.upsert({
    crm: crmKind('salesforce'),
    externalId: local.orgId,
    mode: 'oauth',
    tokens: { accessToken: local.issueAccessToken(), refreshToken: local.issueRefreshToken() },
    instanceUrl: sf.url,
  });
  await storeA.approve(inst.id, 'allowlist');
  return inst;
}

describe('refresh token rotation', () => {
  it('spends a refresh token once; presenting it again revokes its chain', async () => {
    const inst = await installed();
    const refresh = createSalesforceTokenRefresher(config);
    const first = (await storeA.getTokens(inst.id))!;
    const next = await refresh(first, inst);
    expect(next.refreshToken).toBeDefined();
    expect(next.refreshToken).not.toBe(first.refreshToken);
    // A second refresh with the spent token, as an unlocked second process would make.
    await expect(refresh(first, inst)).rejects.toBeInstanceOf(RefreshRejectedError);
    // ... and it took the new chain down with it: the org must be installed again.
    await expect(refresh(next, inst)).rejects.toBeInstanceOf(RefreshRejectedError);
    expect(local.org.sessionUser(next.accessToken)).toBeNull();
  });

  it('two processes refreshing one org at once leave it connected, with one refresh at Salesforce', async () => {
    const inst = await installed();
    const managerA = new TokenManager(storeA, redisA, { salesforce: createSalesforceTokenRefresher(config) });
    const managerB = new TokenManager(storeB, redisB, { salesforce: createSalesforceTokenRefresher(config) });
    const stale = (await storeA.getTokens(inst.id))!.accessToken;
    local.expireAccessTokens();
    local.resetCounters();

    const [a, b] = await Promise.all([managerA.refresh(inst.id, stale), managerB.refresh(inst.id, stale)]);
    expect(a).toBe(b);
    expect(local.counters()['oauth.token']).toBe(1);
    expect((await storeA.get(inst.id))?.status).toBe('connected');
    expect(local.org.sessionUser(a)).toBe(local.integrationUserId);

    // A third process that saw the old token only later takes the stored one: no refresh, no reuse.
    const managerC = new TokenManager(storeB, redisB, { salesforce: createSalesforceTokenRefresher(config) });
    expect(await managerC.refresh(inst.id, stale)).toBe(a);
    expect(local.counters()['oauth.token']).toBe(1);

    // The rotated refresh token stored is the live one: the next refresh works too.
    local.expireAccessTokens();
    const again = await managerB.refresh(inst.id, a);
    expect(local.org.sessionUser(again)).toBe(local.integrationUserId);
    expect((await storeB.get(inst.id))?.status).toBe('connected');
  });
});

describe('API versions', () => {
  it('the connector speaks 68.0 unless told otherwise', async () => {
    expect(DEFAULT_API_VERSION).toBe('68.0');
    expect(readSalesforceConfig({}).apiVersion).toBe('68.0');
    const inst = await installed();
    const manager = new TokenManager(storeA, redisA, { salesforce: createSalesforceTokenRefresher(config) });
    const connector = createSalesforceConnector({
      installation: inst,
      tokens: manager.source(inst.id),
      gate: OPEN_GATE,
      config: {
        ...config,
        salesforce: { ...config.salesforce, apiVersion: readSalesforceConfig({}).apiVersion },
      },
    });
    await connector.ensureFields();
    local.seedAccounts(2);
    expect((await connector.listCompanies(null)).records).toHaveLength(2);
    expect(local.apiVersionsSeen()).toEqual(['v68.0']);
  });

  it('the local org refuses versions it does not serve, as Salesforce answers them', async () => {
    const token = local.issueAccessToken();
    const query = (version: string) =>
      fetch(
        `${sf.url}/services/data/${version}/query?q=${encodeURIComponent('SELECT Id FROM Organization')}`,
        {
          headers: { authorization: `Bearer ${token}` },
        },
      );
    expect((await query('v68.0')).status).toBe(200);
    expect((await query('v31.0')).status).toBe(200);
    const future = await query('v69.0');
    expect(future.status).toBe(404);
    expect(await future.json()).toEqual([expect.objectContaining({ errorCode: 'NOT_FOUND' })]);
    // Salesforce retired 21.0-30.0 in Summer '25: REST answers 410 GONE.
    expect((await query('v30.0')).status).toBe(410);
    const soap = await fetch(`${sf.url}/services/Soap/m/30.0`, {
      method: 'POST',
      headers: { 'content-type': 'text/xml' },
      body: '<?xml version="1.0"?><Envelope/>',
    });
    expect(soap.status).toBe(500);
    expect(await soap.text()).toContain('UNSUPPORTED_API_VERSION');
    expect(local.apiVersionsSeen()).toEqual(['v31.0', 'v68.0']);
  });
});
