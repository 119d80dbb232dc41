import { afterEach, describe, expect, it } from 'vitest';
import type { LocalSystem } from '../local/system.js';
import type { CrmKind } from '../src/crm/connector.js';
import { CookieJar } from './support/cookie-jar.js';
import { crmCalls, resetCalls } from './support/crm-calls.js';
import { startTestSystem, stopTestSystem } from './support/local-system.js';
import { queuesIdle, runEnded } from './support/system-state.js';

/**
 * Issue 26, point 1: being let in is a recorded fact, never inferred from a status. The walk-around the
 * review found: an OAuth install nobody approved (pending); the tenant uninstalls the app; the operator's
 * preview meets the refused token (which marked the installation `disconnected`); the tenant installs again,
 * and the installation came back `connected`: fields created and a backfill on the operator's report key.
 * On both CRMs, through the real OAuth routes and the local stand-ins, counting their calls.
 */

let system: LocalSystem | undefined;

afterEach(async () => {
  await stopTestSystem(system);
  system = undefined;
});

const bearer = (s: LocalSystem) => ({ authorization: `Bearer ${s.ctx.config.adminToken}` });

/** Install redirect, the stand-in's consent, the callback; the installation as stored after it. */
async function installThroughOAuth(s: LocalSystem, crm: CrmKind): Promise<string> {
  const browser = new CookieJar();
  const install = await browser.fetch(`${s.appUrl}/oauth/${crm}/install`);
  expect(install.status).toBe(302);
  const consent = await browser.fetch(install.headers.get('location')!);
  expect(consent.status).toBe(302);
  const done = await browser.fetch(consent.headers.get('location')!);
  expect(done.status).toBeLessThan(400);
  const [installation] = await s.ctx.installations.list();
  return installation!.id;
}

function uninstallApp(s: LocalSystem, crm: CrmKind): void {
  if (crm === 'hubspot') {
    s.hubspot.revokeRefreshTokens();
    s.hubspot.expireAccessTokens();
  } else {
    s.salesforce!.org.revokeRefreshTokens();
    s.salesforce!.org.expireAccessTokens();
  }
}

describe.each(['hubspot', 'salesforce'] as CrmKind[])('on %s, an installation nobody approved', (crm) => {
  it('stays pending through an uninstall, a refused token and a reinstall: zero CRM calls, zero report reads', async () => {
    const s = await startTestSystem({
      crm,
      companies: 0,
      logLevel: 'silent',
      env:
        crm === 'salesforce'
          ? { SALESFORCE_CLIENT_ID: 'local-client-id', SALESFORCE_CLIENT_SECRET: 'local-client-secret' }
          : {},
    });
    system = s;
    await runEnded(s);
    // The token-mode installation is the operator's own; take it away so the OAuth install is new.
    const removed = await fetch(`${s.appUrl}/admin/api/installations/${s.installationId}`, {
      method: 'DELETE',
      headers: bearer(s),
    });
    expect(removed.status).toBe(200);

    const id = await installThroughOAuth(s, crm);
    expect(await s.ctx.installations.get(id)).toMatchObject({ status: 'pending', mode: 'oauth' });

    // The tenant uninstalls; the operator previews: the refused token is met.
    uninstallApp(s, crm);
    await fetch(`${s.appUrl}/admin/api/installations/${id}/preview`, { method: 'POST', headers: bearer(s) });
    await queuesIdle(s, 30_000);
    const afterRefusal = await s.ctx.installations.get(id);
    expect(afterRefusal?.status).toBe('pending');
    expect(afterRefusal?.approvedBy).toBeUndefined();

    // The tenant installs again.
    const reinstalledAt = new Date().toISOString();
    resetCalls(s, crm);
    s.sandbox.resetRequestCounts();
    const again = await installThroughOAuth(s, crm);
    expect(again).toBe(id);
    const sync = await fetch(`${s.appUrl}/admin/api/installations/${id}/sync`, {
      method: 'POST',
      headers: { ...bearer(s), 'content-type': 'application/json' },
      body: '{}',
    });
    expect(sync.status).toBe(409);
    await queuesIdle(s, 30_000);

    expect({
      installation: await s.ctx.installations.get(id),
      crmCalls: crmCalls(s, crm),
      reportReads: s.sandbox.requestCount(),
      // The preview before the reinstall is a run of its own (stopped by the refused token); none after it.
      runs: (await s.ctx.runs.recent(id, 5)).filter((run) => run.startedAt >= reinstalledAt),
    }).toMatchObject({
      installation: { status: 'pending', approvedBy: undefined },
      crmCalls: {},
      reportReads: 0,
      runs: [],
    });
  }, 120_000);
});
