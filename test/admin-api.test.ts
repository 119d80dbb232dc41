import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSystem } from '../local/system.js';
import type { ReviewOutcome } from '../src/admin/admin-actions.js';
import type { InstallationView } from '../src/admin/overview.js';
import { crmKind } from '../src/providers.js';
import type { EventLogEntry } from '../src/storage/event-log.js';
import type { ReviewItem } from '../src/storage/review-codec.js';
import type { RunSummary } from '../src/storage/runs.js';
import {
  type AdminAnswer,
  type AdminApiError,
  type AdminRequest,
  adminRequest,
} from './support/admin-api.js';
import { startTestSystem, stopTestSystem } from './support/local-system.js';
import { queuesIdle, runEnded } from './support/system-state.js';
import { waitFor } from './support/wait.js';

/**
 * The admin API and the page's auth against the whole product on one machine: the local HubSpot, the report
 * sandbox, a real Redis and one worker. Every decision made here is checked on the local CRM's record.
 */

let system: LocalSystem;
let id: string;
let token: string;

interface ApiError extends AdminApiError {
  keyStatus?: number;
}
type Installations = { installations: InstallationView[] };
type SyncStarted = { runId: string; kind: string };

/** A request to the admin page or API with only the credentials it names. */
function call<T = ApiError>(path: string, o: AdminRequest = {}): Promise<AdminAnswer<T>> {
  return adminRequest<T>(system, path, o);
}

const bearer = () => ({ authorization: `Bearer ${token}` });

/** Logs in through the form; returns the Cookie header to send and the CSRF token the page embeds. */
async function login(): Promise<{ cookie: string; csrf: string; setCookies: string[] }> {
  const res = await call('/admin/login', { method: 'POST', form: { token, next: '/admin' } });
  expect(res.status).toBe(303);
  const setCookies = res.headers.getSetCookie();
  const session = setCookies.find((c) => c.startsWith('rc_admin_session='));
  expect(session).toBeDefined();
  const cookie = session!.split(';')[0]!;
  const page = await call('/admin', { headers: { cookie } });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)?.[1];
  expect(csrf).toBeDefined();
  return { cookie, csrf: csrf!, setCookies };
}

/** The run (the newest when no id is given) once it is done or stopped. */
function runFinished(runId?: string): Promise<RunSummary> {
  return runEnded(system, runId);
}

function crm(recordId: string): Record<string, string> {
  const company = system.hubspot.getCompany(recordId);
  if (!company) throw new Error(`record ${recordId} is not in the local HubSpot`);
  return company.properties;
}

beforeAll(async () => {
  system = await startTestSystem({ companies: 300 });
  id = system.installationId;
  token = system.ctx.config.adminToken;
  await runFinished();
}, 180_000);

afterAll(async () => {
  await stopTestSystem(system);
});

describe('authentication', () => {
  it('refuses the API without a token, with a wrong one, and with a forged cookie', async () => {
    const none = await call('/admin/api/installations');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(none.text).not.toContain(id);

    const wrong = await call('/admin/api/installations', { headers: { authorization: `Bearer ${token}x` } });
    expect(wrong.status).toBe(401);
    const notBearer = await call('/admin/api/installations', {
      headers: { authorization: `Basic ${token}` },
    });
    expect(notBearer.status).toBe(401);

    const { cookie } = await login();
    const [name, value] = cookie.split('=') as [string, string];
    const forged = `${name}=${value.slice(0, -2)}${value.endsWith('AA') ? 'BB' : 'AA'}`;
    expect((await call('/admin/api/installations', { headers: { cookie: forged } })).status).toBe(401);
    // A valid cookie does not rescue a wrong bearer token: the Authorization header decides alone.
    expect(
      (await call('/admin/api/installations', { headers: { cookie, authorization: 'Bearer nope' } })).status,
    ).toBe(401);
  });

  it('shows the login form instead of the page, and refuses a wrong token at the form', async () => {
    const page = await call('/admin');
    expect(page.status).toBe(200);
    expect(page.text).toContain('name="token"');
    expect(page.text).not.toContain(id);

    const deep = await call(`/admin/installations/${id}`);
    expect(deep.text).toContain('name="token"');
    expect(deep.text).toContain(`value="/admin/installations/${id}"`);

    const wrong = await call('/admin/login', { method: 'POST', form: { token: 'not-the-admin-token' } });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.getSetCookie()).toEqual([]);
    expect(wrong.text).toContain('That is not the admin token');
  });

  it('sets a signed, HttpOnly, SameSite=Strict session cookie with an expiry, and admits it', async () => {
    const { cookie, setCookies } = await login();
    const session = setCookies.find((c) => c.startsWith('rc_admin_session='))!;
    expect(session).toMatch(/HttpOnly/);
    expect(session).toMatch(/SameSite=Strict/);
    expect(session).toMatch(/Path=\/admin/);
    expect(Number(/Max-Age=(\d+)/.exec(session)?.[1])).toBeGreaterThan(3600);
    expect(session).not.toMatch(/Secure/); // APP_URL is http here
    const ok = await call<Installations>('/admin/api/installations', { headers: { cookie } });
    expect(ok.status).toBe(200);
    expect(ok.body.installations.map((i) => i.id)).toEqual([id]);
  });

  it('needs the CSRF token for changes made with the cookie, and none for bearer requests', async () => {
    const { cookie, csrf } = await login();
    const noToken = await call(`/admin/api/installations/${id}/sync`, {
      method: 'POST',
      json: {},
      headers: { cookie },
    });
    expect(noToken.status).toBe(403);
    expect(noToken.body.code).toBe('CSRF_REJECTED');
    const wrongToken = await call(`/admin/api/installations/${id}/sync`, {
      method: 'POST',
      json: {},
      headers: { cookie, 'x-csrf-token': `${csrf.slice(1)}x` },
    });
    expect(wrongToken.status).toBe(403);
    // The same refusal for the page's own forms.
    const form = await call(`/admin/installations/${id}/sync`, {
      method: 'POST',
      form: {},
      headers: { cookie },
    });
    expect(form.status).toBe(403);
    expect((await system.ctx.runs.recent(id, 10)).length).toBe(1);

    const withToken = await call<SyncStarted>(`/admin/api/installations/${id}/sync`, {
      method: 'POST',
      json: {},
      headers: { cookie, 'x-csrf-token': csrf },
    });
    expect(withToken.status).toBe(202);
    await runFinished(withToken.body.runId);

    const viaBearer = await call<SyncStarted>(`/admin/api/installations/${id}/sync`, {
      method: 'POST',
      json: {},
      headers: bearer(),
    });
    expect(viaBearer.status).toBe(202);
    await runFinished(viaBearer.body.runId);
  });

  it('ends the session at log out, even for a copy of the cookie', async () => {
    const { cookie, csrf } = await login();
    const out = await call('/admin/logout', { method: 'POST', form: { _csrf: csrf }, headers: { cookie } });
    expect(out.status).toBe(303);
    expect(
      out.headers.getSetCookie().some((c) => c.startsWith('rc_admin_session=;') && /Max-Age=0/.test(c)),
    ).toBe(true);
    expect((await call('/admin/api/installations', { headers: { cookie } })).status).toBe(401);
  });

  it('sends the security headers and no-store on admin answers', async () => {
    for (const path of ['/admin', '/admin/api/installations']) {
      const res = await call(path, { headers: bearer() });
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toMatch(/script-src 'self'(;|$)/);
      expect(csp).not.toContain('unsafe-inline');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('cache-control')).toBe('no-store');
    }
  });

  it('puts the queue dashboard behind the same login, with CSRF on its changes', async () => {
    expect((await call('/admin/queues')).text).toContain('name="token"');
    expect((await call('/admin/queues/api/queues')).status).toBe(401);
    const { cookie, csrf } = await login();
    const board = await call('/admin/queues', { headers: { cookie } });
    expect(board.status).toBe(200);
    expect(board.text).toContain('__UI_CONFIG__');
    expect(board.headers.getSetCookie().some((c) => c.startsWith(`XSRF-TOKEN=${csrf};`))).toBe(true);
    const queues = await call('/admin/queues/api/queues', { headers: { cookie } });
    expect(queues.status).toBe(200);
    expect(JSON.stringify(queues.body)).toContain('backfill');
    const resume = '/admin/queues/api/queues/realtime/resume';
    expect((await call(resume, { method: 'PUT', headers: { cookie } })).status).toBe(403);
    expect(
      (await call(resume, { method: 'PUT', headers: { cookie, 'x-xsrf-token': csrf } })).status,
    ).toBeLessThan(300);
  });
});

describe('installations', () => {
  it('lists each installation with coverage, usage, key state and last run', async () => {
    const res = await call<Installations>('/admin/api/installations', { headers: bearer() });
    expect(res.status).toBe(200);
    const [view] = res.body.installations as [InstallationView];
    const coverage = await system.ctx.index.coverage(id);
    expect(view.coverage.counts).toEqual(coverage);
    expect(view.coverage.total).toBe(300);
    expect(view.coverage.counts.needs_review).toBeGreaterThan(0);
    expect(view.connection).toEqual({
      state: 'connected',
      reason: null,
      reconnectUrl: null,
      reconnectHint: null,
    });
    expect(view.reportKey).toMatchObject({ source: 'environment', sandbox: true });
    expect(view.apiUsage?.summary).toMatch(/daily calls/);
    const scores = await system.ctx.index.scores(id);
    expect(view.scores.count).toBe(scores.length);
    expect(view.scores.buckets).toHaveLength(10);
    expect(view.scores.buckets.reduce((s: number, b: { count: number }) => s + b.count, 0)).toBe(
      scores.length,
    );
    expect(view.lastRun?.state).toBe('done');
    expect(view.reviewCount).toBe((await system.ctx.index.reviews.items(id)).length);
  });

  it('shows a disconnected OAuth installation with its reason and a reconnect link', async () => {
    const other = await system.ctx.installations.upsert({
      crm: crmKind('hubspot'),
      externalId: '777001',
      mode: 'oauth',
      tokens: { accessToken: 'at-unused', refreshToken: 'rt-unused', expiresAt: Date.now() + 60_000 },
    });
    const reason = 'HubSpot refused the refresh token (BAD_REFRESH_TOKEN)';
    // One that was let in: a never-approved installation stays pending however its tokens fare.
    await system.ctx.installations.approve(other.id, 'admin');
    await system.ctx.installations.setStatus(other.id, 'disconnected', reason);
    try {
      const res = await call<InstallationView>(`/admin/api/installations/${other.id}`, { headers: bearer() });
      expect(res.body.connection).toEqual({
        state: 'disconnected',
        reason,
        reconnectUrl: '/oauth/hubspot/install',
        reconnectHint: null,
      });
      const { cookie } = await login();
      const page = await call(`/admin/installations/${other.id}`, { headers: { cookie } });
      expect(page.text).toContain(reason);
      expect(page.text).toMatch(/<a class="button" href="\/oauth\/hubspot\/install">Reconnect HubSpot<\/a>/);
    } finally {
      expect(
        (await call(`/admin/api/installations/${other.id}`, { method: 'DELETE', headers: bearer() })).status,
      ).toBe(200);
    }
  });

  it('answers 404 for an unknown installation and 400 for bad input', async () => {
    for (const path of [
      '/admin/api/installations/hubspot-999/runs',
      '/admin/api/installations/bad id/review',
    ]) {
      const res = await call(path, { headers: bearer() });
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('INSTALLATION_NOT_FOUND');
    }
    const syncUnknown = await call('/admin/api/installations/hubspot-999/sync', {
      method: 'POST',
      json: {},
      headers: bearer(),
    });
    expect(syncUnknown.status).toBe(404);
    const badFull = await call(`/admin/api/installations/${id}/sync`, {
      method: 'POST',
      json: { full: 'yes' },
      headers: bearer(),
    });
    expect(badFull.status).toBe(400);
    expect(badFull.body.error).toMatch(/full must be true or false/);
    const badJson = await call(`/admin/api/installations/${id}/key`, {
      method: 'POST',
      headers: { ...bearer(), 'content-type': 'application/json' },
    });
    expect(badJson.status).toBe(400);
    const broken = await fetch(`${system.appUrl}/admin/api/installations/${id}/key`, {
      method: 'POST',
      headers: { ...bearer(), 'content-type': 'application/json' },
      body: '{"apiKey":',
    });
    expect(broken.status).toBe(400);
    expect(((await broken.json()) as { code: string }).code).toBe('BAD_JSON');
    const badLimit = await call('/admin/api/events?limit=0', { headers: bearer() });
    expect(badLimit.status).toBe(400);
  });
});

describe('the report-service key', () => {
  it('explains a revoked key (401) and does not store it', async () => {
    const res = await call(`/admin/api/installations/${id}/key`, {
      method: 'POST',
      json: { apiKey: 'sk_sandbox_revoked' },
      headers: bearer(),
    });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 'REPORT_KEY_REFUSED', keyStatus: 401 });
    expect(res.body.error).toMatch(/401/);
    expect(res.body.error).toMatch(/revoked/);
    expect(await system.ctx.installations.getReportsApiKey(id)).toBeNull();

    // The page's form says the same beside the field.
    const { cookie, csrf } = await login();
    const form = await call(`/admin/installations/${id}/key`, {
      method: 'POST',
      form: { _csrf: csrf, apiKey: 'sk_sandbox_revoked' },
      headers: { cookie },
    });
    expect(form.status).toBe(422);
    expect(form.text).toMatch(/id="api-key-error">The report service refused this key \(401\)/);
    expect(form.text).toContain('aria-invalid="true"');
    expect(await system.ctx.installations.getReportsApiKey(id)).toBeNull();
  });

  it('explains a key without the read scope (403)', async () => {
    const writeOnly = system.sandbox.registerKey({ scopes: ['write'] });
    const res = await call(`/admin/api/installations/${id}/key`, {
      method: 'POST',
      json: { apiKey: writeOnly.key },
      headers: bearer(),
    });
    expect(res.status).toBe(422);
    expect(res.body.keyStatus).toBe(403);
    expect(res.body.error).toMatch(/read scope/);
    expect(await system.ctx.installations.getReportsApiKey(id)).toBeNull();
  });

  it('shows a stopped installation, refuses to sync it, and resumes it with a working sandbox key', async () => {
    const reason = 'the report service refused the key (401)';
    await system.ctx.installations.setStatus(id, 'key_invalid', reason);
    const stopped = await call<Installations>('/admin/api/installations', { headers: bearer() });
    expect(stopped.body.installations[0]?.connection).toMatchObject({ state: 'key_invalid', reason });
    expect(stopped.body.installations[0]?.reportKey.problem).toBe(reason);
    const sync = await call(`/admin/api/installations/${id}/sync`, {
      method: 'POST',
      json: {},
      headers: bearer(),
    });
    expect(sync.status).toBe(409);
    expect(sync.body.error).toMatch(/enter a working report-service key/);

    const res = await call<{ sandbox: boolean; resumedRunId: string | null }>(
      `/admin/api/installations/${id}/key`,
      {
        method: 'POST',
        json: { apiKey: 'sk_sandbox_read' },
        headers: bearer(),
      },
    );
    expect(res.status).toBe(200);
    expect(res.body.sandbox).toBe(true);
    expect(res.body.resumedRunId).toEqual(expect.any(String));
    expect((await system.ctx.installations.get(id))?.status).toBe('connected');
    expect((await runFinished(res.body.resumedRunId!)).kind).toBe('full');
    expect(await system.ctx.installations.getReportsApiKey(id)).toBe('sk_sandbox_read');
    const raw = await system.ctx.redis.hgetall(system.ctx.keys.installation(id));
    expect(JSON.stringify(raw)).not.toContain('sk_sandbox_read');

    const list = await call<Installations>('/admin/api/installations', { headers: bearer() });
    expect(list.body.installations[0]?.reportKey).toMatchObject({
      source: 'installation',
      sandbox: true,
      problem: null,
    });
    const { cookie } = await login();
    const page = await call(`/admin/installations/${id}`, { headers: { cookie } });
    expect(page.text).toContain('Sandbox: fixture data');
  });

  it('refuses an empty key with a clear message', async () => {
    const res = await call(`/admin/api/installations/${id}/key`, {
      method: 'POST',
      json: { apiKey: '  ' },
      headers: bearer(),
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/enter an API key/);
  });
});

describe('the review queue', () => {
  let items: ReviewItem[];

  beforeAll(async () => {
    const res = await call<{ items: ReviewItem[] }>(`/admin/api/installations/${id}/review`, {
      headers: bearer(),
    });
    expect(res.status).toBe(200);
    items = res.body.items;
    expect(items.length).toBeGreaterThanOrEqual(5);
    for (const item of items) expect(crm(item.recordId).report_match_status).toBe('needs_review');
  });

  it('accepting a candidate links the record in the CRM at once', async () => {
    const item = items[0]!;
    const slug = item.candidates[1]!.slug;
    const res = await call(`/admin/api/installations/${id}/review/${item.recordId}`, {
      method: 'POST',
      json: { action: 'accept', slug },
      headers: bearer(),
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ recordId: item.recordId, action: 'accept', slug, status: 'matched' });
    expect(crm(item.recordId).report_slug).toBe(slug);
    expect(crm(item.recordId).report_match_status).toBe('matched');
    expect(Number(crm(item.recordId).report_score)).toBe(system.sandbox.getReport(slug)!.score.overall);
    expect(await system.ctx.index.reviews.item(id, item.recordId)).toBeNull();
  });

  it('rejecting the candidates leaves the record without a link', async () => {
    const item = items[1]!;
    const res = await call<ReviewOutcome>(`/admin/api/installations/${id}/review/${item.recordId}`, {
      method: 'POST',
      json: { action: 'reject' },
      headers: bearer(),
    });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('no_match');
    expect(crm(item.recordId).report_match_status).toBe('no_match');
    expect(crm(item.recordId).report_slug ?? '').toBe('');
  });

  it('a slug set by hand links any published report, through the form with the cookie', async () => {
    const item = items[2]!;
    const offered = new Set(item.candidates.map((c) => c.slug));
    const other = system.sandbox.listReports().find((r) => r.published && !offered.has(r.slug))!;
    const { cookie, csrf } = await login();
    const res = await call(`/admin/installations/${id}/review/${item.recordId}`, {
      method: 'POST',
      form: { _csrf: csrf, action: 'set', slug: other.slug },
      headers: { cookie },
    });
    expect(res.status).toBe(303);
    // Back to the review page, the message naming the record (a form without a list place or next item).
    expect(res.headers.get('location')).toBe(
      `/admin/installations/${id}/review?done=review-linked&record=${item.recordId}#done`,
    );
    expect(crm(item.recordId).report_slug).toBe(other.slug);
    expect(crm(item.recordId).report_match_status).toBe('matched');
  });

  it('a slug with no published report is refused in plain words and nothing is written', async () => {
    const item = items[3]!;
    const before = { ...crm(item.recordId) };
    const res = await call(`/admin/api/installations/${id}/review/${item.recordId}`, {
      method: 'POST',
      json: { action: 'set', slug: 'no-such-report-anywhere' },
      headers: bearer(),
    });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatch(/no published report has that slug/i);
    expect(crm(item.recordId)).toEqual(before);

    const unpublished = system.sandbox.listReports().find((r) => !r.published)!;
    const { cookie, csrf } = await login();
    const form = await call(`/admin/installations/${id}/review/${item.recordId}`, {
      method: 'POST',
      form: { _csrf: csrf, action: 'set', slug: unpublished.slug },
      headers: { cookie },
    });
    expect(form.status).toBe(422);
    expect(form.text).toMatch(/No published report has that slug/);
    expect(crm(item.recordId)).toEqual(before);
  });

  it('refuses to accept a slug that was not offered, a record not in review, and a bad decision', async () => {
    const item = items[4]!;
    const notOffered = await call(`/admin/api/installations/${id}/review/${item.recordId}`, {
      method: 'POST',
      json: { action: 'accept', slug: 'something-else' },
      headers: bearer(),
    });
    expect(notOffered.status).toBe(400);
    expect(notOffered.body.code).toBe('NOT_A_CANDIDATE');
    const resolved = await call(`/admin/api/installations/${id}/review/${items[0]!.recordId}`, {
      method: 'POST',
      json: { action: 'reject' },
      headers: bearer(),
    });
    expect(resolved.status).toBe(404);
    expect(resolved.body.code).toBe('NOT_IN_REVIEW');
    const bad = await call(`/admin/api/installations/${id}/review/${item.recordId}`, {
      method: 'POST',
      json: { action: 'maybe' },
      headers: bearer(),
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/action must be/);
    const noSlug = await call(`/admin/api/installations/${id}/review/${item.recordId}`, {
      method: 'POST',
      json: { action: 'set' },
      headers: bearer(),
    });
    expect(noSlug.status).toBe(400);
    expect(crm(item.recordId).report_match_status).toBe('needs_review');
  });
});

describe('sync history and events', () => {
  it('starts a full sync now and shows it in the history until it is done', async () => {
    const res = await call<SyncStarted>(`/admin/api/installations/${id}/sync`, {
      method: 'POST',
      json: { full: true },
      headers: bearer(),
    });
    expect(res.status).toBe(202);
    expect(res.body.kind).toBe('full');
    const done = await runFinished(res.body.runId);
    expect(done.state).toBe('done');
    const runs = await call<{ runs: RunSummary[] }>(`/admin/api/installations/${id}/runs`, {
      headers: bearer(),
    });
    const shown = runs.body.runs.find((r) => r.id === res.body.runId);
    expect(shown).toMatchObject({ kind: 'full', state: 'done', recordsListed: 300 });
    expect(shown?.totals.records).toBe(300);
    expect(runs.body.runs.map((r) => r.kind)).toContain('initial');
  });

  it('lists recent webhook events with their outcome', async () => {
    const linked = system.seed.find((c) => c.expected.status === 'matched')!;
    const slug = (linked.expected as { slug: string }).slug;
    system.sandbox.updateReport(slug, { score: { overall: 42.25, band: 'weak' } });
    await system.sandbox.waitForDeliveries();
    const res = await call<{ events: EventLogEntry[] }>('/admin/api/events?limit=10', { headers: bearer() });
    expect(res.status).toBe(200);
    const event = res.body.events.find((e) => e.slug === slug);
    expect(event).toMatchObject({ source: 'reports', type: 'score.changed', outcome: 'queued' });
    const { cookie } = await login();
    const page = await call('/admin/events', { headers: { cookie } });
    expect(page.text).toContain(`<code>${slug}</code>`);
    expect(page.text).toContain(event!.id);
  });
});

describe('disconnect', () => {
  it('asks for confirmation on the page before anything is removed', async () => {
    const { cookie } = await login();
    const confirm = await call(`/admin/installations/${id}/disconnect`, { headers: { cookie } });
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain('Yes, disconnect');
    expect(await system.ctx.installations.get(id)).not.toBeNull();
  });

  it('removes the installation and every key it had in Redis', async () => {
    // The events posted above are still being worked through. The link index, the links a run made and the
    // pending slugs are written by nothing once the installation's hash is gone (linear-hash.test.ts and
    // installation-removal.test.ts check that), but a batch in flight may still write other keys of the
    // installation (its record locks, the CRM rate gate, a report request it resolves) after the removal: this
    // checks the removal itself, once that work is done.
    await waitFor(
      'the score-change inbox to drain',
      async () => ((await system.ctx.pipeline.deps.inbox.waiting()) === 0 ? true : undefined),
      30_000,
      100,
    );
    await queuesIdle(system);
    const { cookie, csrf } = await login();
    const scoped = system.ctx.keys.instPattern(id);
    expect((await system.ctx.redis.keys(scoped)).length).toBeGreaterThan(0);
    const runKeys = (await system.ctx.runs.recent(id, 50)).map((r) => system.ctx.keys.run(r.id));
    expect(runKeys.length).toBeGreaterThan(0);
    const res = await call(`/admin/api/installations/${id}`, {
      method: 'DELETE',
      headers: { cookie, 'x-csrf-token': csrf },
    });
    expect(res.status).toBe(200);
    // Token mode: the token is the operator's own, so nothing is revoked in the CRM.
    expect(res.body).toMatchObject({ removed: id, revocation: { outcome: 'nothing_to_revoke' } });
    expect(await system.ctx.redis.keys(scoped)).toEqual([]);
    expect(await system.ctx.redis.exists(system.ctx.keys.installation(id))).toBe(0);
    // Sync history goes too.
    expect(await system.ctx.redis.exists(...runKeys)).toBe(0);
    expect(
      (await call<Installations>('/admin/api/installations', { headers: bearer() })).body.installations,
    ).toEqual([]);
    expect((await call(`/admin/api/installations/${id}/runs`, { headers: bearer() })).status).toBe(404);
  });
});
