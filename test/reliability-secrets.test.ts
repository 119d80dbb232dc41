import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_HUBSPOT_CLIENT_SECRET } from '../connectors/hubspot/local/index.js';
import type { LocalSystem } from '../local/system.js';
import { InstallationService } from '../src/app/installation-service.js';
import type { StoredTokens } from '../src/installations/store.js';
import { createLogger } from '../src/log.js';
import { installThroughOAuth } from './support/hubspot-install.js';
import { startTestSystem, stopTestSystem } from './support/local-system.js';
import { measured } from './support/measured.js';
import { ReportProxy } from './support/report-proxy.js';
import { postSignedEvent, scoreChangedEvent, signedHeaders } from './support/report-webhooks.js';
import { dumpPrefix, findSecrets } from './support/secret-scan.js';
import { queuesIdle, runEnded } from './support/system-state.js';
import { waitFor } from './support/wait.js';

/**
 * A full life of an installation with every credential in play (a private-app token, OAuth access and refresh
 * tokens, a refreshed access token, an installation's own report-service key, the webhook secret, the client
 * secret, the admin token, the encryption key), including the failures that put messages in logs, jobs and
 * statuses: a refresh, a refused refresh token, forged webhooks and OAuth callbacks, a wrong admin token, CRM
 * 500s and a report service that quotes the key back in its 503s and 401s. Afterwards every Redis key and value of
 * the test's prefix, every log line (at trace level) and every HTTP answer the test saw are searched for each
 * credential's text.
 */

const proxy = new ReportProxy();
const logLines: string[] = [];
const answers = new Map<string, string>();
const liveKey = `rk_live_${randomBytes(16).toString('hex')}`;
const seenTokens: StoredTokens[] = [];
let system: LocalSystem;

async function remember(what: string, res: Response): Promise<Response> {
  answers.set(`HTTP answer: ${what}`, `${JSON.stringify([...res.headers])} ${await res.clone().text()}`);
  return res;
}

beforeAll(async () => {
  const proxyUrl = await proxy.listen();
  const logger = createLogger('trace', { write: (line: string) => void logLines.push(line) });
  system = await startTestSystem({
    companies: 200,
    workers: 0,
    logger,
    env: { REPORTS_API_URL: proxyUrl },
  });
  proxy.target = new URL(system.sandboxUrl).origin;
  await system.ctx.startWorkers();
  await runEnded(system);
}, 120_000);

afterAll(async () => {
  await stopTestSystem(system);
  await proxy.close();
});

describe('credentials at rest, in logs and in error messages', () => {
  it('an installation lives through OAuth, a refresh, faults and refusals', async () => {
    const { ctx, installationId, hubspot, sandbox, appUrl } = system;
    const tokens = async () => {
      const t = (await ctx.installations.getTokens(installationId))!;
      seenTokens.push(t);
      return t;
    };

    await installThroughOAuth(system);
    await runEnded(system);
    await tokens();

    sandbox.registerKey({ key: liveKey, scopes: ['read'], sandbox: false });
    await new InstallationService(ctx).setReportKey(installationId, liveKey);

    // The service fails for a while and quotes the key back in its 503s: the job gives up an attempt.
    let echoed = 0;
    const echo = {
      matches: () => echoed < 12,
      answer: () => {
        echoed += 1;
        return { status: 503, body: { error: { message: `temporary failure serving key ${liveKey}` } } };
      },
    };
    proxy.rules.push(echo);
    await runEnded(system, await ctx.pipeline.startSync(installationId, 'full'));
    proxy.rules.splice(proxy.rules.indexOf(echo), 1);

    // An expired access token, refreshed during a sync with CRM 500s in it.
    hubspot.expireAccessTokens();
    hubspot.injectFaults({ failNext: 4, failStatus: 500 });
    for (const [i, r] of sandbox.listReports().entries()) {
      if (r.published) sandbox.updateReport(r.slug, { score: { overall: 55 + i / 100 } });
    }
    await runEnded(system, await ctx.pipeline.startSync(installationId, 'full'));
    await queuesIdle(system);
    const refreshed = await tokens();
    expect(refreshed.accessToken).not.toBe(seenTokens[0]!.accessToken);

    // Webhooks: signed, forged, unsigned.
    const secret = ctx.config.reports.webhookSecrets[0]!;
    const event = scoreChangedEvent(
      `evt_${randomUUID()}`,
      sandbox.listReports().find((r) => r.published)!.slug,
    );
    const body = JSON.stringify(event);
    await remember(
      'signed webhook',
      await postSignedEvent(`${appUrl}/webhooks/reports`, secret, body, { id: event.id }),
    );
    await remember(
      'forged webhook',
      await fetch(`${appUrl}/webhooks/reports`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...signedHeaders(`whsec_${randomBytes(24).toString('base64')}`, body, event.id),
        },
        body,
      }),
    );
    // OAuth: a forged state; admin: a wrong token, then the right one.
    await remember(
      'forged OAuth callback',
      await fetch(`${appUrl}/oauth/hubspot/callback?code=abc&state=x.y`, { redirect: 'manual' }),
    );
    await remember(
      'wrong admin token',
      await fetch(`${appUrl}/admin/api/installations`, {
        headers: { authorization: 'Bearer wrong-token-123456' },
      }),
    );
    await remember(
      'admin login',
      await fetch(`${appUrl}/admin/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: ctx.config.adminToken }),
        redirect: 'manual',
      }),
    );
    await remember(
      'admin API',
      await fetch(`${appUrl}/admin/api/installations`, {
        headers: { authorization: `Bearer ${ctx.config.adminToken}` },
      }),
    );
    // A key refused at the admin page: its check answers 401.
    await remember(
      'admin sets a revoked key',
      await fetch(`${appUrl}/admin/api/installations/${installationId}/key`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ctx.config.adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ apiKey: 'sk_sandbox_revoked' }),
      }),
    );

    // The service refuses the installation's key and quotes it back in its error message.
    proxy.rules.push({
      matches: () => true,
      answer: () => ({
        status: 401,
        body: { error: { code: 'unauthorized', message: `API key ${liveKey} has been revoked` } },
      }),
    });
    await ctx.pipeline.startSync(installationId, 'full');
    await waitFor(
      'key_invalid',
      async () =>
        (await ctx.installations.get(installationId))?.status === 'key_invalid' ? true : undefined,
      30_000,
    );
    await queuesIdle(system);

    // The refresh token is refused: the installation is disconnected.
    hubspot.revokeRefreshTokens();
    await ctx.tokens.refresh(installationId, refreshed.accessToken).catch(() => undefined);
    expect((await ctx.installations.get(installationId))?.status).toBe('disconnected');
  });

  it('no credential appears in Redis, in the logs or in an HTTP answer', async () => {
    const { config } = system.ctx;
    const secrets: Record<string, string> = {
      privateAppToken: config.hubspot.accessToken!,
      hubspotClientSecret: LOCAL_HUBSPOT_CLIENT_SECRET,
      reportsKeyFromEnv: config.reports.apiKey!,
      installationReportsKey: liveKey,
      webhookSecret: config.reports.webhookSecrets[0]!,
      webhookKeyBase64: config.reports.webhookSecrets[0]!.slice('whsec_'.length),
      adminToken: config.adminToken,
      encryptionKey: config.encryptionKey.toString('base64'),
    };
    seenTokens.forEach((t, i) => {
      secrets[`accessToken${i}`] = t.accessToken;
      if (t.refreshToken) secrets[`refreshToken${i}`] = t.refreshToken;
    });
    const redis = await dumpPrefix(system.ctx.redis, system.ctx.config.redisPrefix);
    const places = new Map<string, string>([
      ...[...redis].map(([k, v]) => [`redis ${k}`, `${k} ${v}`] as [string, string]),
      ['logs', logLines.join('')],
      ...answers,
    ]);
    const found = findSecrets(secrets, places);
    measured('secrets-scan', {
      redisKeys: redis.size,
      logLines: logLines.length,
      answers: answers.size,
      secrets: Object.keys(secrets),
      found,
    });
    expect(redis.size).toBeGreaterThan(50);
    expect(logLines.length).toBeGreaterThan(3);
    expect(seenTokens.length).toBe(2);
    expect(found).toEqual([]);
  });
});
