import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSystem } from '../local/system.js';
import { AdminAuth } from '../src/admin/admin-auth.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { crmKind } from '../src/providers.js';
import { adminRequest } from './support/admin-api.js';
import { startTestSystem, stopTestSystem } from './support/local-system.js';
import { runEnded } from './support/system-state.js';

/**
 * Issue 31: named admins (ADMIN_TOKENS, `name:token` pairs beside ADMIN_TOKEN), each decision and mass action
 * logged with the name; and the admin API's mass actions: `?dryRun=1` answers what they would do and changes
 * nothing, a confirmation applies only to its set, the one call still does it, and an undo is undone.
 */

const base = {
  ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
  ADMIN_TOKEN: 'an-admin-token-of-some-length',
  REPORTS_API_URL: 'http://127.0.0.1:4010/api',
};
const load = (extra: Record<string, string>) => loadConfig({ ...base, ...extra }, { envFile: null });

function problemsOf(read: () => unknown, variable = 'ADMIN_TOKENS'): string[] {
  try {
    read();
  } catch (err) {
    // A section that fails leaves the others unread (reported as missing): only the variable asked about counts.
    if (err instanceof ConfigError) {
      return err.problems.filter((p) => p.variable === variable).map((p) => `${p.variable} ${p.expectation}`);
    }
    throw err;
  }
  return [];
}

const ALICE = 'alice-token-0123456789';
const BOB = 'bob-token-0123456789ab';

describe('ADMIN_TOKENS', () => {
  it('reads name:token pairs, and is enough without ADMIN_TOKEN', () => {
    expect(load({ ADMIN_TOKENS: ` alice:${ALICE} , bob:${BOB}` }).adminTokens).toEqual([
      { name: 'alice', token: ALICE },
      { name: 'bob', token: BOB },
    ]);
    expect(load({}).adminTokens).toEqual([]);
    const onlyNamed = loadConfig(
      {
        ENCRYPTION_KEY: base.ENCRYPTION_KEY,
        REPORTS_API_URL: base.REPORTS_API_URL,
        ADMIN_TOKENS: `alice:${ALICE}`,
      },
      { envFile: null },
    );
    expect(onlyNamed.adminTokens).toHaveLength(1);
  });

  it('names every bad entry in one message, never its token', () => {
    const problems = problemsOf(() =>
      load({
        ADMIN_TOKENS: `alice:${ALICE},nocolon,bad name:${BOB},carol:short,alice:${BOB}0,dave:${ALICE}`,
      }),
    );
    expect(problems).toEqual([
      'ADMIN_TOKENS entry 2 expects name:token (comma-separated pairs, e.g. alice:<token>,bob:<token>)',
      "ADMIN_TOKENS entry 3 has no valid name: 1 to 32 letters, digits, '-' or '_' before the colon",
      'ADMIN_TOKENS the token of carol (entry 4) expects at least 16 characters',
      'ADMIN_TOKENS alice is named twice (entry 5): one token per admin',
      "ADMIN_TOKENS the token of dave (entry 6) is another admin's too: give each their own",
    ]);
    for (const p of problems) expect(p).not.toContain(ALICE);
    expect(problemsOf(() => load({ ADMIN_TOKENS: `alice:${base.ADMIN_TOKEN}` }))).toEqual([
      'ADMIN_TOKENS holds ADMIN_TOKEN as a named token: give the named admins tokens of their own',
    ]);
    expect(
      problemsOf(
        () =>
          loadConfig(
            { ENCRYPTION_KEY: base.ENCRYPTION_KEY, REPORTS_API_URL: base.REPORTS_API_URL },
            { envFile: null },
          ),
        'ADMIN_TOKEN',
      ),
    ).toEqual(['ADMIN_TOKEN is required (or ADMIN_TOKENS): a long random string']);
  });

  it('signs a named admin in with the name in the session; unnamed sessions from before still read', () => {
    const key = randomBytes(32);
    const before = new AdminAuth({ adminToken: base.ADMIN_TOKEN, encryptionKey: key, secureCookies: false });
    const old = before.issueSession();
    const auth = new AdminAuth({ adminToken: base.ADMIN_TOKEN, encryptionKey: key, secureCookies: false });
    expect(auth.readSession(old.cookieValue)).toEqual(old.session);

    const named = new AdminAuth({
      adminToken: base.ADMIN_TOKEN,
      adminTokens: [
        { name: 'alice', token: ALICE },
        { name: 'bob', token: BOB },
      ],
      encryptionKey: key,
      secureCookies: false,
    });
    expect(named.adminFor(ALICE)).toEqual({ name: 'alice' });
    expect(named.adminFor(BOB)).toEqual({ name: 'bob' });
    expect(named.adminFor(base.ADMIN_TOKEN)).toEqual({ name: null });
    expect(named.adminFor(`${ALICE}x`)).toBeNull();
    const { session, cookieValue } = named.issueSession('alice');
    expect(named.readSession(cookieValue)).toEqual({ ...session, name: 'alice' });
    // The name is signed: another name in the same cookie is a forgery.
    expect(named.readSession(cookieValue.replace('.alice.', '.bob.'))).toBeNull();
    // Changing the named admins ends every session, as changing ADMIN_TOKEN does.
    const rotated = new AdminAuth({
      adminToken: base.ADMIN_TOKEN,
      adminTokens: [{ name: 'alice', token: ALICE }],
      encryptionKey: key,
      secureCookies: false,
    });
    expect(rotated.readSession(cookieValue)).toBeNull();
  });
});

describe('named admins and dry runs on the local system', () => {
  let system: LocalSystem;
  const api = (suffix: string) => `/admin/api/installations/${system.installationId}${suffix}`;
  const as = (token: string) => ({ authorization: `Bearer ${token}` });

  beforeAll(async () => {
    system = await startTestSystem({
      crm: crmKind('hubspot'),
      companies: 150,
      env: { ADMIN_TOKENS: `alice:${ALICE},bob:${BOB}` },
    });
    await runEnded(system);
  }, 180_000);

  afterAll(async () => {
    await stopTestSystem(system);
  });

  it('logs a decision made through the login form with the admin’s name', async () => {
    const login = await fetch(`${system.appUrl}/admin/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: ALICE, next: '/admin' }).toString(),
      redirect: 'manual',
    });
    expect(login.status).toBe(303);
    const cookie = login.headers
      .getSetCookie()
      .find((c) => c.startsWith('rc_admin_session='))!
      .split(';')[0]!;
    const page = await (await fetch(`${system.appUrl}/admin`, { headers: { cookie } })).text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page)![1]!;
    const linked = system.recordIds.find((id) => system.crm.record(id)?.linkSource === 'auto')!;
    const res = await adminRequest(system, api(`/records/${linked}/unlink`), {
      headers: { cookie, 'x-csrf-token': csrf },
      json: {},
    });
    expect(res.status).toBe(200);
    const [latest] = await system.ctx.decisions.latest(system.installationId, 1);
    expect(latest).toMatchObject({
      action: 'unlink',
      recordId: linked,
      by: { kind: 'admin-session', name: 'alice' },
    });
  });

  it('answers ?dryRun=1 without changing anything, binds a confirmation to its set, and undoes in one call', async () => {
    const [run] = await system.ctx.runs.recent(system.installationId, 20).then((r) => r.slice(-1));
    const state = () => system.recordIds.map((id) => JSON.stringify(system.crm.record(id)));
    const before = state();
    const dry = await adminRequest<{ dryRun: true; count: number; sample: unknown[]; confirm: string }>(
      system,
      api(`/runs/${run!.id}/undo?dryRun=1`),
      { headers: as(BOB), json: {} },
    );
    expect(dry.status).toBe(200);
    expect(dry.body.dryRun).toBe(true);
    expect(dry.body.count).toBeGreaterThan(20);
    expect(dry.body.sample).toHaveLength(20);
    expect(state()).toEqual(before);

    // A confirmation for another set is refused, with the set as it is now.
    const wrong = await adminRequest<{ code: string; preview: { count: number } }>(
      system,
      api(`/runs/${run!.id}/undo`),
      { headers: as(BOB), json: { confirm: 'A'.repeat(32) } },
    );
    expect(wrong.status).toBe(409);
    expect(wrong.body.code).toBe('SET_CHANGED');
    expect(wrong.body.preview.count).toBe(dry.body.count);
    expect(state()).toEqual(before);

    const done = await adminRequest<{ unlinked: number; kept: number; massId: string }>(
      system,
      api(`/runs/${run!.id}/undo`),
      { headers: as(BOB), json: { confirm: dry.body.confirm } },
    );
    expect(done.status).toBe(200);
    expect(done.body.unlinked).toBe(dry.body.count);
    const [logged] = await system.ctx.decisions.latest(system.installationId, 1);
    expect(logged).toMatchObject({ action: 'undo', by: { kind: 'admin-token', name: 'bob' } });

    const listed = await adminRequest<{ massActions: { id: string; by: { name?: string }; done: number }[] }>(
      system,
      api('/mass-actions'),
      { headers: as(BOB) },
    );
    expect(listed.body.massActions[0]).toMatchObject({
      id: done.body.massId,
      by: { name: 'bob' },
      done: done.body.unlinked,
    });

    const undoDry = await adminRequest<{ count: number }>(
      system,
      api(`/mass-actions/${done.body.massId}/undo?dryRun=1`),
      {
        headers: as(ALICE),
        json: {},
      },
    );
    expect(undoDry.body.count).toBe(done.body.unlinked);
    const undone = await adminRequest<{ restored: number }>(
      system,
      api(`/mass-actions/${done.body.massId}/undo`),
      { headers: as(ALICE), method: 'POST' },
    );
    expect(undone.status).toBe(200);
    expect(undone.body.restored).toBe(done.body.unlinked);
    const slugs = (s: string[]) =>
      s.map((r) => JSON.parse(r)).map((r) => `${r.slug}|${r.linkSource}|${r.status}`);
    expect(slugs(state())).toEqual(slugs(before));
    const again = await adminRequest<{ code: string }>(
      system,
      api(`/mass-actions/${done.body.massId}/undo`),
      {
        headers: as(ALICE),
        method: 'POST',
      },
    );
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('ALREADY_UNDONE');
    const unknown = await adminRequest<{ code: string }>(
      system,
      api('/mass-actions/mnothere/undo?dryRun=1'),
      {
        headers: as(ALICE),
        method: 'POST',
      },
    );
    expect(unknown.status).toBe(404);
  }, 120_000);

  it('answers an empty bulk selection with a clear error, and a dry run of a bulk decision', async () => {
    const empty = await adminRequest<{ error: string }>(system, api('/review/bulk'), {
      headers: as(ALICE),
      json: { action: 'reject', recordIds: [] },
    });
    expect(empty.status).toBe(400);
    expect(empty.body.error).toMatch(/select at least one record/);
    const items = await system.ctx.index.reviews.items(system.installationId);
    const ids = items.slice(0, 3).map((i) => i.recordId);
    const dry = await adminRequest<{ count: number }>(system, api('/review/bulk?dryRun=1'), {
      headers: as(ALICE),
      json: { action: 'reject', recordIds: ids },
    });
    expect(dry.body.count).toBe(ids.length);
    expect(await system.ctx.index.statusesOf(system.installationId, ids)).toEqual(
      ids.map(() => 'needs_review'),
    );
  });
});
