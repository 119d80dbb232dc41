import { describe, expect, it } from 'vitest';
import { type AppToken, TokenManager } from '../src/auth/token-manager.js';
import type { InstallationStore } from '../src/installations/store.js';
import type { RedisClient } from '../src/redis.js';

/** App tokens (client-credentials grants) go through the token manager: kept per manager, asked for once at a time. */

/** A manager whose installation side is never reached: app tokens use neither the store nor Redis. */
function manager(): TokenManager {
  return new TokenManager({} as InstallationStore, {} as RedisClient, {});
}

function issuer(lifetimeMs = 30 * 60_000) {
  let issued = 0;
  const request = async (): Promise<AppToken> => {
    await new Promise((r) => setTimeout(r, 5));
    issued++;
    return { accessToken: `app-${issued}`, expiresAt: Date.now() + lifetimeMs };
  };
  return { request, issued: () => issued };
}

describe('TokenManager.appToken', () => {
  it('asks once for concurrent callers and keeps the token until it nears its expiry', async () => {
    const tokens = manager();
    const app = issuer();
    const source = tokens.appToken('journal:app', app.request);
    expect(await Promise.all([source.current(), source.current(), source.current()])).toEqual([
      'app-1',
      'app-1',
      'app-1',
    ]);
    expect(await tokens.appToken('journal:app', app.request).current()).toBe('app-1');
    expect(app.issued()).toBe(1);

    const short = issuer(30_000);
    const expiring = tokens.appToken('journal:short', short.request);
    await expiring.current();
    await expiring.current();
    expect(short.issued()).toBe(2);
  });

  it('asks again after a refusal of the token it holds, not of one already replaced', async () => {
    const tokens = manager();
    const app = issuer();
    const source = tokens.appToken('journal:app', app.request);
    const first = await source.current();
    const [a, b] = await Promise.all([
      source.refreshAfterRejection(first),
      source.refreshAfterRejection(first),
    ]);
    expect([a, b]).toEqual(['app-2', 'app-2']);
    expect(await source.refreshAfterRejection(first)).toBe('app-2');
    expect(app.issued()).toBe(2);
  });

  it('shares nothing between two managers (two applications in one process)', async () => {
    const app = issuer();
    await manager().appToken('journal:app', app.request).current();
    await manager().appToken('journal:app', app.request).current();
    expect(app.issued()).toBe(2);
  });
});
