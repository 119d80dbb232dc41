import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSystem } from '../local/system.js';
import { createServerApp } from '../src/server/app.js';
import { CookieJar } from './support/cookie-jar.js';
import { installThroughOAuth } from './support/hubspot-install.js';
import { startTestSystem, stopTestSystem } from './support/local-system.js';
import { measured } from './support/measured.js';
import { queuesIdle, runEnded } from './support/system-state.js';
import { waitFor } from './support/wait.js';
import { buildWorkerCli, sharedSecretsEnv, WorkerProcess, workerEnvFor } from './support/worker-process.js';

/**
 * Issue 16, point 1, end to end with real processes: the server in this process, the work in a separate
 * `report-connector worker` process, the local HubSpot and the report sandbox. An OAuth install from a portal
 * that is not in INSTALL_ALLOWLIST is created pending and costs nothing (no CRM list, no CRM write, no report
 * read, not even field creation) until an operator approves it on the admin API; then it backfills.
 */

const COMPANIES = 40;
let system: LocalSystem;
let worker: WorkerProcess | undefined;

const bearer = () => ({ authorization: `Bearer ${system.ctx.config.adminToken}` });

function crmWork(): { lists: number; writes: number; schema: number } {
  const calls = system.hubspot.stats().calls;
  const sum = (prefix: string) =>
    Object.entries(calls)
      .filter(([k]) => k.startsWith(prefix))
      .reduce((n, [, v]) => n + v, 0);
  return {
    lists: (calls['companies.list'] ?? 0) + (calls['companies.batchRead'] ?? 0) + sum('companies.search'),
    writes: calls['companies.batchUpdate'] ?? 0,
    schema: sum('properties.'),
  };
}

beforeAll(async () => {
  const bin = await buildWorkerCli();
  system = await startTestSystem({ companies: 0, workers: 0, env: sharedSecretsEnv(), logLevel: 'silent' });
  worker = await WorkerProcess.start(bin, workerEnvFor(system));
  await runEnded(system);
  // The token-mode installation is the operator's own; take it away so the OAuth install below is new.
  const removed = await fetch(`${system.appUrl}/admin/api/installations/${system.installationId}`, {
    method: 'DELETE',
    headers: bearer(),
  });
  expect(removed.status).toBe(200);
  system.hubspot.seedCompanies(COMPANIES);
}, 180_000);

afterAll(async () => {
  await worker?.kill();
  await stopTestSystem(system);
});

describe('an OAuth install from a portal not let in', () => {
  it('stays pending (no list, no write, no report read) until approved, then backfills', async () => {
    system.hubspot.resetStats();
    system.sandbox.resetRequestCounts();
    const id = await installThroughOAuth(system).catch(async () => {
      // The callback answers a page (not a redirect) while the installation waits: read it from the store.
      const all = await system.ctx.installations.list();
      return all[0]?.id ?? 'none';
    });
    const installation = await system.ctx.installations.get(id);
    expect(installation?.status).toBe('pending');
    expect(installation).toMatchObject({ installedBy: 'installer@example.test', mode: 'oauth' });

    // A change in the portal and a report event arrive meanwhile; nothing may come of them.
    const [firstId] = system.hubspot.seedCompanies(1).map((c) => c.id);
    await system.hubspot.setCompanyProperty(firstId!, 'name', 'Renamed while pending', { notify: true });
    const sync = await fetch(`${system.appUrl}/admin/api/installations/${id}/sync`, {
      method: 'POST',
      headers: { ...bearer(), 'content-type': 'application/json' },
      body: '{}',
    });
    expect(sync.status).toBe(409);
    await queuesIdle(system, 10_000);
    const whilePending = { crm: crmWork(), reportReads: system.sandbox.requestCount() };
    expect(whilePending).toEqual({ crm: { lists: 0, writes: 0, schema: 0 }, reportReads: 0 });
    expect(await system.ctx.runs.recent(id, 5)).toEqual([]);

    // The admin lists it first, with what is known of it.
    const list = (await (
      await fetch(`${system.appUrl}/admin/api/installations`, { headers: bearer() })
    ).json()) as { installations: { id: string; connection: { state: string }; installedBy: string }[] };
    expect(list.installations[0]).toMatchObject({
      id,
      connection: { state: 'pending' },
      installedBy: 'installer@example.test',
    });

    const approve = await fetch(`${system.appUrl}/admin/api/installations/${id}/approve`, {
      method: 'POST',
      headers: bearer(),
    });
    expect(approve.status).toBe(200);
    const again = await fetch(`${system.appUrl}/admin/api/installations/${id}/approve`, {
      method: 'POST',
      headers: bearer(),
    });
    expect(again.status).toBe(409);
    const run = await waitFor(
      'the first backfill after approval',
      async () => {
        const [r] = await system.ctx.runs.recent(id, 1);
        return r && (r.state === 'done' || r.state === 'stopped') ? r : undefined;
      },
      120_000,
      200,
    );
    const afterApproval = { crm: crmWork(), reportReads: system.sandbox.requestCount() };
    measured('install-approval', { whilePending, afterApproval, records: run.totals.records });
    expect(run.state).toBe('done');
    expect(run.totals.records).toBe(COMPANIES + 1);
    expect(afterApproval.crm.lists).toBeGreaterThan(0);
    expect(afterApproval.crm.writes).toBeGreaterThan(0);
    expect(afterApproval.reportReads).toBeGreaterThan(0);
  }, 180_000);

  it('a portal in INSTALL_ALLOWLIST starts at once', async () => {
    const id = 'hubspot-62515';
    await fetch(`${system.appUrl}/admin/api/installations/${id}`, { method: 'DELETE', headers: bearer() });
    const ctx = { ...system.ctx, config: { ...system.ctx.config, installAllowlist: ['hubspot:62515'] } };
    const server = createServer(createServerApp(ctx));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      // The redirect URI registered with the stand-in is the system's; the callback is sent there by hand.
      const browser = new CookieJar();
      const install = await browser.fetch(`${base}/oauth/hubspot/install`);
      const consent = await browser.fetch(install.headers.get('location')!);
      const callback = new URL(consent.headers.get('location')!);
      const done = await browser.fetch(`${base}${callback.pathname}${callback.search}`);
      expect(done.status).toBe(302);
      const installation = await system.ctx.installations.get(id);
      expect(installation).toMatchObject({ status: 'connected', approvedBy: 'allowlist' });
      const [run] = await system.ctx.runs.recent(id, 1);
      expect(run?.kind).toBe('initial');
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  }, 120_000);
});
