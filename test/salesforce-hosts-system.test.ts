import { afterEach, describe, expect, it } from 'vitest';
import { SALESFORCE_KIND } from '../connectors/salesforce/provider.js';
import type { LocalSystem } from '../local/system.js';
import { CookieJar } from './support/cookie-jar.js';
import { crmCalls, resetCalls } from './support/crm-calls.js';
import { startTestSystem, stopTestSystem } from './support/local-system.js';
import { runEnded } from './support/system-state.js';

/**
 * A reinstall that would move an installation to another connection waits for an operator, through the whole
 * server: the OAuth routes, the admit step (INSTALL_ALLOWLIST names the org) and the local Salesforce.
 */

let system: LocalSystem | undefined;

afterEach(async () => {
  await stopTestSystem(system);
  system = undefined;
});

describe('a held change in the running server', () => {
  it('an allow-listed org reinstalled through another connection runs nothing until an operator approves', async () => {
    // The poll alone: a change stream's first catch-up poll lands at a time of its own, and this test counts
    // every CRM call after the reinstall.
    const s = await startTestSystem({
      crm: 'salesforce',
      companies: 0,
      logLevel: 'silent',
      env: { SALESFORCE_CHANGE_EVENTS: 'false' },
    });
    system = s;
    await runEnded(s);
    const id = s.installationId;
    const before = (await s.ctx.installations.get(id))!;
    const tokensBefore = await s.ctx.installations.getTokens(id);
    // The org is allow-listed: a plain install of it would be let in at once.
    s.ctx.config.installAllowlist.push(`salesforce:${before.externalId}`);

    const created = await fetch(`${s.appUrl}/admin/api/salesforce/connections`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.ctx.config.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        label: 'another app',
        consumerKey: s.salesforce!.org.clientId,
        consumerSecret: s.salesforce!.org.clientSecret,
        loginUrl: s.crmUrl,
      }),
    });
    expect(created.status).toBe(201);
    const { installLink } = (await created.json()) as { installLink: string };
    const runsBefore = await s.ctx.runs.recent(id, 50);
    resetCalls(s, SALESFORCE_KIND);

    const browser = new CookieJar();
    const start = await browser.fetch(installLink);
    const consent = await browser.fetch(start.headers.get('location')!);
    const done = await browser.fetch(consent.headers.get('location')!);
    expect(done.status).toBe(200);

    const after = (await s.ctx.installations.get(id))!;
    expect(after.status).toBe('pending');
    expect(after.approvedBy).toBeUndefined();
    expect(after.changeHeldAt).toBeDefined();
    expect(after.connectionId).toBeUndefined();
    expect(await s.ctx.installations.getTokens(id)).toEqual(tokensBefore);
    // Nothing ran for it: no field setup, no run, no CRM call.
    expect(await s.ctx.runs.recent(id, 50)).toHaveLength(runsBefore.length);
    expect(crmCalls(s, SALESFORCE_KIND)).toEqual({});
  });
});
