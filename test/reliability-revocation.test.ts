import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer as createTcpServer, type Socket, type Server as TcpServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { HUBSPOT_DEFAULT_API_VERSION, hubspotPaths } from '../connectors/hubspot/provider.js';
import { SALESFORCE_REVOKE_PATH } from '../connectors/salesforce/oauth/revoke.js';
import type { AppContext } from '../src/app/context.js';
import type { Revocation } from '../src/app/installation-service.js';
import { crmKind } from '../src/providers.js';
import { createServerApp } from '../src/server/app.js';
import { installThroughOAuth } from './support/hubspot-install.js';
import { suiteSystem } from './support/local-system.js';
import { measured } from './support/measured.js';

/**
 * Issue 16, point 10, end to end against the local system: removing an OAuth installation ends the app's access
 * in the CRM (HubSpot: the app is uninstalled and the refresh token revoked; Salesforce: the refresh token and
 * its access tokens are revoked), and when the CRM cannot be reached or does not answer, the removal still
 * completes here, within a bound, and the answer says that the CRM access was not revoked and what to do.
 */

const P = hubspotPaths(HUBSPOT_DEFAULT_API_VERSION);

interface Removal {
  status: number;
  body: { removed?: string; revocation?: Revocation };
  ms: number;
}

async function remove(base: string, ctx: AppContext, id: string): Promise<Removal> {
  const started = Date.now();
  const res = await fetch(`${base}/admin/api/installations/${encodeURIComponent(id)}`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${ctx.config.adminToken}` },
  });
  return { status: res.status, body: (await res.json()) as Removal['body'], ms: Date.now() - started };
}

/** The same system served with another view of where the CRM is, as when it is unreachable. */
async function serveWith(ctx: AppContext): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createHttpServer(createServerApp(ctx));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** A port where nothing listens: connecting is refused at once. */
async function closedPortUrl(): Promise<string> {
  const probe = createTcpServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const { port } = probe.address() as AddressInfo;
  await new Promise((r) => probe.close(r));
  return `http://127.0.0.1:${port}`;
}

/** A CRM that accepts connections and never answers. */
async function silentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: TcpServer = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

describe('HubSpot: removal uninstalls the app', () => {
  const system = suiteSystem({ companies: 3, logLevel: 'silent' }, { firstRunEnded: true });

  /** Installs through the real OAuth routes; a new portal waits for approval, which revocation does not need. */
  async function oauthInstall(): Promise<{ id: string; accessToken: string; refreshToken: string }> {
    const id = await installThroughOAuth(system).catch(async () => {
      const all = await system.ctx.installations.list();
      return all.find((i) => i.mode === 'oauth')?.id ?? 'none';
    });
    const tokens = await system.ctx.installations.getTokens(id);
    expect(tokens?.refreshToken).toBeTruthy();
    return { id, accessToken: tokens!.accessToken, refreshToken: tokens!.refreshToken! };
  }

  const accountDetails = (accessToken: string) =>
    fetch(`${system.hubspotUrl}${P.accountDetails}`, { headers: { authorization: `Bearer ${accessToken}` } });

  it("token mode: the operator's own token is left alone", async () => {
    const removal = await remove(system.appUrl, system.ctx, system.installationId);
    expect(removal.status).toBe(200);
    expect(removal.body.revocation?.outcome).toBe('nothing_to_revoke');
    expect(system.hubspot.stats().calls['appinstalls.uninstall'] ?? 0).toBe(0);
  });

  it('an OAuth installation: uninstalled in HubSpot, its tokens stop working', async () => {
    const { id, accessToken, refreshToken } = await oauthInstall();
    expect((await accountDetails(accessToken)).status).toBe(200);
    system.hubspot.resetStats();

    const removal = await remove(system.appUrl, system.ctx, id);
    measured('revocation-hubspot', { status: removal.status, ...removal.body.revocation, ms: removal.ms });
    expect(removal.status).toBe(200);
    expect(removal.body).toMatchObject({ removed: id, revocation: { outcome: 'revoked' } });
    expect(system.hubspot.stats().calls).toMatchObject({ 'appinstalls.uninstall': 1, 'oauth.revoke': 1 });
    expect((await accountDetails(accessToken)).status).toBe(401);
    const refreshed = await fetch(`${system.hubspotUrl}${P.token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        client_id: system.ctx.config.hubspot.clientId!,
        client_secret: system.ctx.config.hubspot.clientSecret!,
        refresh_token: refreshToken,
      }),
    });
    expect(refreshed.status).toBe(400);
    expect(await system.ctx.installations.get(id)).toBeNull();
  });

  it('HubSpot unreachable: removed here all the same, and the answer says the access was not revoked', async () => {
    const { id, accessToken } = await oauthInstall();
    const { config } = system.ctx;
    const app = await serveWith({
      ...system.ctx,
      config: { ...config, hubspot: { ...config.hubspot, apiUrl: await closedPortUrl() } },
    });
    try {
      const removal = await remove(app.url, system.ctx, id);
      measured('revocation-hubspot-unreachable', { status: removal.status, ...removal.body.revocation });
      expect(removal.status).toBe(200);
      expect(removal.body.revocation).toMatchObject({ outcome: 'failed' });
      expect(removal.body.revocation?.message).toMatch(/could not be reached/);
      expect(removal.body.revocation).toHaveProperty('whatToDo', expect.stringMatching(/Connected apps/));
      expect(await system.ctx.installations.get(id)).toBeNull();
      // Truly not revoked: the portal still accepts the token, which is why the answer says so.
      expect((await accountDetails(accessToken)).status).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('HubSpot silent: the removal answers within its bound', async () => {
    const { id } = await oauthInstall();
    const silent = await silentServer();
    const { config } = system.ctx;
    const app = await serveWith({
      ...system.ctx,
      config: { ...config, hubspot: { ...config.hubspot, apiUrl: silent.url } },
    });
    try {
      const removal = await remove(app.url, system.ctx, id);
      measured('revocation-hubspot-silent', { status: removal.status, ms: removal.ms });
      expect(removal.status).toBe(200);
      expect(removal.body.revocation).toMatchObject({ outcome: 'failed' });
      expect(removal.ms).toBeLessThan(20_000);
      expect(await system.ctx.installations.get(id)).toBeNull();
    } finally {
      await app.close();
      await silent.close();
    }
  }, 30_000);
});

describe('Salesforce: removal revokes the refresh token', () => {
  const system = suiteSystem(
    { crm: crmKind('salesforce'), companies: 3, logLevel: 'silent' },
    {
      firstRunEnded: true,
      // The token-mode installation is the operator's own: removing it revokes nothing.
      prepare: async (started) => {
        const removal = await remove(started.appUrl, started.ctx, started.installationId);
        expect(removal.body.revocation?.outcome).toBe('nothing_to_revoke');
      },
    },
  );

  /** An OAuth installation as the callback stores it, with tokens the local org issued. */
  async function oauthInstallation(instanceUrl: string) {
    const sf = system.salesforce!;
    const tokens = { accessToken: sf.issueAccessToken(), refreshToken: sf.issueRefreshToken() };
    const installation = await system.ctx.installations.upsert({
      crm: crmKind('salesforce'),
      externalId: sf.orgId,
      mode: 'oauth',
      tokens,
      instanceUrl,
      installedBy: 'integration user',
    });
    return { id: installation.id, ...tokens };
  }

  const revokeAgain = (token: string) =>
    fetch(`${system.crmUrl}${SALESFORCE_REVOKE_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token }),
    });

  it('an OAuth installation: the org no longer knows its tokens', async () => {
    const { id, refreshToken } = await oauthInstallation(system.crmUrl);
    const before = system.salesforce!.counters()['oauth.revoke'] ?? 0;
    const removal = await remove(system.appUrl, system.ctx, id);
    measured('revocation-salesforce', { status: removal.status, ...removal.body.revocation, ms: removal.ms });
    expect(removal.status).toBe(200);
    expect(removal.body).toMatchObject({ removed: id, revocation: { outcome: 'revoked' } });
    expect((system.salesforce!.counters()['oauth.revoke'] ?? 0) - before).toBe(1);
    // Revoked already: Salesforce answers invalid_token.
    expect((await revokeAgain(refreshToken)).status).toBe(400);
    expect(await system.ctx.installations.get(id)).toBeNull();
  });

  it('Salesforce unreachable: removed here all the same, and the answer says what to do', async () => {
    const { id, refreshToken } = await oauthInstallation(await closedPortUrl());
    const removal = await remove(system.appUrl, system.ctx, id);
    expect(removal.status).toBe(200);
    expect(removal.body.revocation).toMatchObject({ outcome: 'failed' });
    expect(removal.body.revocation?.message).toMatch(/could not be reached/);
    expect(removal.body.revocation).toHaveProperty(
      'whatToDo',
      expect.stringMatching(/Connected Apps OAuth Usage/),
    );
    expect(await system.ctx.installations.get(id)).toBeNull();
    // Not revoked, and said so: the org still knows the token.
    expect((await revokeAgain(refreshToken)).status).toBe(200);
  });
});
