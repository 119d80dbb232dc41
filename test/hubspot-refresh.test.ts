import { randomBytes, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import nock from 'nock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HubSpotOAuthError } from '../connectors/hubspot/errors.js';
import type { LocalHubSpot, LocalHubSpotServer } from '../connectors/hubspot/local/index.js';
import {
  createHubSpotTokenRefresher,
  exchangeHubSpotCode,
  type HubSpotOAuthClientConfig,
} from '../connectors/hubspot/oauth/oauth-tokens.js';
import { HUBSPOT_DEFAULT_API_VERSION, hubspotPaths } from '../connectors/hubspot/provider.js';
import { RefreshRejectedError, TokenManager } from '../src/auth/token-manager.js';
import { CrmDisconnectedError } from '../src/crm/errors.js';
import { InstallationStore } from '../src/installations/store.js';
import { crmKind } from '../src/providers.js';
import { closeRedis, createRedis, deleteByPattern, waitForRedis } from '../src/redis.js';
import { SecretBox } from '../src/util/secretbox.js';
import { startLocalHubSpot } from './support/local-hubspot.js';
import { REDIS_URL } from './support/redis-url.js';

/** The date-versioned paths the connector calls by default. */
const P = hubspotPaths(HUBSPOT_DEFAULT_API_VERSION);

const prefix = `rc-test-${randomUUID()}`;
const box = new SecretBox(randomBytes(32));
const REDIRECT = 'http://app.test/oauth/hubspot/callback';
let redisA: Redis;
let redisB: Redis;
let hubspot: LocalHubSpot;
let server: LocalHubSpotServer;
let cfg: HubSpotOAuthClientConfig;

beforeAll(async () => {
  nock.enableNetConnect();
  redisA = createRedis(REDIS_URL, 'producer');
  redisB = createRedis(REDIS_URL, 'producer');
  await Promise.all([waitForRedis(redisA), waitForRedis(redisB)]);
  ({ hubspot, server, oauth: cfg } = await startLocalHubSpot());
});

afterAll(async () => {
  await server.close();
  await deleteByPattern(redisA, `${prefix}:*`);
  await closeRedis(redisA, redisB);
});

beforeEach(() => {
  hubspot.resetStats();
});

/** An installation as the OAuth callback leaves it, with its access token already stale. */
async function installed(store: InstallationStore): Promise<{ id: string; stale: string }> {
  const grant = await exchangeHubSpotCode(cfg, hubspot.issueAuthCode({ redirectUri: REDIRECT }), REDIRECT);
  const installation = await store.upsert({
    crm: crmKind('hubspot'),
    externalId: `${hubspot.portalId}-${randomUUID().slice(0, 8)}`,
    mode: 'oauth',
    tokens: grant.tokens,
  });
  // As the server does for a portal it lets in (INSTALL_ALLOWLIST): one never let in stays pending.
  await store.approve(installation.id, 'allowlist');
  hubspot.expireAccessTokens();
  return { id: installation.id, stale: grant.tokens.accessToken };
}

describe('createHubSpotTokenRefresher', () => {
  it('gets a new access token with the refresh token and keeps what HubSpot returns', async () => {
    const refresher = createHubSpotTokenRefresher({ ...cfg, now: () => 5_000 });
    const grant = await exchangeHubSpotCode(cfg, hubspot.issueAuthCode(), REDIRECT);
    const store = new InstallationStore(redisA, box, prefix);
    const installation = await store.upsert({
      crm: crmKind('hubspot'),
      externalId: 'r1',
      mode: 'oauth',
      tokens: grant.tokens,
    });
    const next = await refresher(grant.tokens, installation);
    expect(next.accessToken).not.toBe(grant.tokens.accessToken);
    expect(next.refreshToken).toBe(grant.tokens.refreshToken);
    expect(next.expiresAt).toBe(5_000 + 1800_000);
  });

  it('turns invalid_grant / BAD_REFRESH_TOKEN into RefreshRejectedError', async () => {
    const refresher = createHubSpotTokenRefresher(cfg);
    const store = new InstallationStore(redisA, box, prefix);
    const installation = await store.upsert({
      crm: crmKind('hubspot'),
      externalId: 'r2',
      mode: 'oauth',
      tokens: { accessToken: 'a', refreshToken: 'never-issued' },
    });
    const err = await refresher({ accessToken: 'a', refreshToken: 'never-issued' }, installation).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RefreshRejectedError);
    expect((err as RefreshRejectedError).providerCode).toBe('BAD_REFRESH_TOKEN');
  });

  it('leaves other token-endpoint failures as HubSpotOAuthError (retryable by TokenManager)', async () => {
    const api = 'https://api.hubspot.test';
    nock(api).post(P.token).reply(502, '<html>Bad gateway</html>');
    const refresher = createHubSpotTokenRefresher({ ...cfg, apiUrl: api });
    const store = new InstallationStore(redisA, box, prefix);
    const installation = await store.upsert({
      crm: crmKind('hubspot'),
      externalId: 'r3',
      mode: 'oauth',
      tokens: { accessToken: 'a', refreshToken: 'b' },
    });
    const err = await refresher({ accessToken: 'a', refreshToken: 'b' }, installation).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(HubSpotOAuthError);
    expect(err).not.toBeInstanceOf(RefreshRejectedError);
    expect((err as HubSpotOAuthError).status).toBe(502);
    nock.cleanAll();
  });
});

describe('TokenManager with the HubSpot refresher', () => {
  it('refreshes once when two processes (two managers, two connections) refresh the same installation at once', async () => {
    const storeA = new InstallationStore(redisA, box, prefix);
    const storeB = new InstallationStore(redisB, box, prefix);
    const refresher = createHubSpotTokenRefresher(cfg);
    const managerA = new TokenManager(storeA, redisA, { hubspot: refresher }, { lockPollMs: 20 });
    const managerB = new TokenManager(storeB, redisB, { hubspot: refresher }, { lockPollMs: 20 });
    const { id, stale } = await installed(storeA);
    hubspot.resetStats();

    const [a, b] = await Promise.all([managerA.refresh(id, stale), managerB.refresh(id, stale)]);
    expect(a).toBe(b);
    expect(a).not.toBe(stale);
    expect(hubspot.stats().calls['oauth.token']).toBe(1);
    expect((await storeB.getTokens(id))?.accessToken).toBe(a);
  });

  it('marks the installation disconnected on invalid_grant and does not retry the refresh', async () => {
    const store = new InstallationStore(redisA, box, prefix);
    const disconnected: string[] = [];
    const manager = new TokenManager(
      store,
      redisA,
      { hubspot: createHubSpotTokenRefresher(cfg) },
      {
        onDisconnected: async (installationId) => {
          disconnected.push(installationId);
        },
      },
    );
    const { id } = await installed(store);
    // Make the stored token expire so `current()` refreshes.
    const tokens = (await store.getTokens(id))!;
    await store.setTokens(id, { ...tokens, expiresAt: Date.now() - 1 });
    hubspot.revokeRefreshTokens();
    hubspot.resetStats();

    await expect(manager.current(id)).rejects.toBeInstanceOf(CrmDisconnectedError);
    expect((await store.get(id))?.status).toBe('disconnected');
    expect((await store.get(id))?.statusReason).toContain('BAD_REFRESH_TOKEN');
    expect(disconnected).toEqual([id]);

    const again = await Promise.allSettled(Array.from({ length: 5 }, () => manager.current(id)));
    expect(again.every((r) => r.status === 'rejected' && r.reason instanceof CrmDisconnectedError)).toBe(
      true,
    );
    expect(hubspot.stats().calls['oauth.token']).toBe(1);
    expect(disconnected).toEqual([id]);
  });
});
