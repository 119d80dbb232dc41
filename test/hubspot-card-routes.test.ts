import { describe, expect, it } from 'vitest';
import { CARD_REQUESTS_PER_MINUTE } from '../connectors/hubspot/card/card-rate-limit.js';
import type { CardData } from '../connectors/hubspot/card/ui/card-data.js';
import {
  LOCAL_HUBSPOT_CLIENT_SECRET,
  LOCAL_HUBSPOT_PORTAL_ID,
} from '../connectors/hubspot/local/local-hubspot.js';
import { computeHubSpotSignatureV3 } from '../connectors/hubspot/webhooks/webhook-signature.js';
import { demoCompanies } from '../local/demo-seed.js';
import { loadFixtureReports } from '../src/sandbox/index.js';
import { suiteSystem } from './support/local-system.js';

/**
 * The HubSpot app card's routes end to end against the local HubSpot: a request signed as `hubspot.fetch`
 * signs it gets that portal's company; unsigned, stale, tampered, other-portal and other-company requests are
 * refused; a decision and a report request taken on the card reach the CRM record and the decision log with
 * the HubSpot user; a portal over its budget gets 429 with Retry-After.
 */

const USER_ID = '4242';

interface Signed {
  method?: 'GET' | 'POST';
  portalId?: string | null;
  userId?: string | null;
  body?: unknown;
  /** Epoch ms the request claims. */
  at?: number;
  secret?: string;
  /** Sign and send this query instead of the portal and user ones (a URL HubSpot may extend). */
  query?: string;
  /** Send this query instead of the one that was signed (a tampered URL). */
  sentQuery?: string;
  unsigned?: boolean;
}

const system = suiteSystem(
  { crm: 'hubspot', companies: demoCompanies(loadFixtureReports(), 20) },
  { firstRunEnded: true, timeoutMs: 180_000 },
);

async function card(path: string, options: Signed = {}) {
  const method = options.method ?? 'GET';
  const query = new URLSearchParams();
  if (options.portalId !== null) query.set('portalId', options.portalId ?? LOCAL_HUBSPOT_PORTAL_ID);
  if (options.userId !== null) query.set('userId', options.userId ?? USER_ID);
  const sentQuery = options.query ?? query.toString();
  const signedUrl = `${system.appUrl}${path}${sentQuery ? `?${sentQuery}` : ''}`;
  const body = options.body === undefined ? '' : JSON.stringify(options.body);
  const at = String(options.at ?? Date.now());
  const headers: Record<string, string> = {};
  if (body) headers['content-type'] = 'application/json';
  if (!options.unsigned) {
    headers['x-hubspot-request-timestamp'] = at;
    headers['x-hubspot-signature-v3'] = computeHubSpotSignatureV3(
      options.secret ?? LOCAL_HUBSPOT_CLIENT_SECRET,
      method,
      signedUrl,
      body,
      at,
    );
  }
  const url = options.sentQuery === undefined ? signedUrl : `${system.appUrl}${path}?${options.sentQuery}`;
  const res = await fetch(url, { method, headers, ...(body ? { body } : {}) });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

const companyPath = (id: string) => `/cards/hubspot/companies/${id}`;

function recordWith(status: string): string {
  const i = system.seed.findIndex((c) => c.expected.status === status);
  const id = system.recordIds[i];
  if (!id) throw new Error(`no seeded ${status} company`);
  return id;
}

describe('HubSpot card routes, signed by hubspot.fetch', () => {
  it("answers a signed request with that portal's company as the record holds it", async () => {
    const id = recordWith('matched');
    const res = await card(companyPath(id));
    expect(res.status).toBe(200);
    const data = res.body as unknown as CardData;
    const record = system.crm.record(id)!;
    expect(data.companyId).toBe(id);
    expect(data.status).toBe('matched');
    expect(data.report?.slug).toBe(record.slug);
    expect(data.report?.score).toBe(record.score);
    expect(data.report?.band).toBe(record.band);
    expect(data.report?.pillars.length).toBeGreaterThan(0);
    expect(data.linkSource).toBe('auto');
  });

  it('refuses unsigned, wrongly signed, stale and tampered requests (401)', async () => {
    const path = companyPath(recordWith('matched'));
    const unsigned = await card(path, { unsigned: true });
    expect(unsigned.status).toBe(401);
    expect(unsigned.body.error).toBe('invalid_signature');
    expect(unsigned.body).not.toHaveProperty('report');
    expect((await card(path, { secret: 'not-the-app-secret' })).status).toBe(401);
    const stale = await card(path, { at: Date.now() - 6 * 60_000 });
    expect(stale.status).toBe(401);
    expect(String(stale.body.message)).toMatch(/more than 5 minutes old/);
    // Signed for this portal, sent for another: the URL is part of what is signed.
    expect((await card(path, { sentQuery: `portalId=999&userId=${USER_ID}` })).status).toBe(401);
  });

  it('refuses a signed URL without the portal or the user', async () => {
    const path = companyPath(recordWith('matched'));
    const noPortal = await card(path, { portalId: null });
    expect(noPortal.status).toBe(401);
    expect(noPortal.body.error).toBe('unsigned_identity');
    expect((await card(path, { userId: null })).status).toBe(401);
  });

  it('accepts the portal and user named twice alike (card and HubSpot), refuses two different ones', async () => {
    const path = companyPath(recordWith('matched'));
    const portal = LOCAL_HUBSPOT_PORTAL_ID;
    const twice = `portalId=${portal}&userId=${USER_ID}&portalId=${portal}&userId=${USER_ID}`;
    expect((await card(path, { query: twice })).status).toBe(200);
    const conflicting = await card(path, { query: `portalId=${portal}&userId=${USER_ID}&portalId=987654` });
    expect(conflicting.status).toBe(401);
    expect(conflicting.body.error).toBe('unsigned_identity');
  });

  it('refuses another portal (403) and a company that is not this portal’s (404)', async () => {
    const otherPortal = await card(companyPath(recordWith('matched')), { portalId: '987654' });
    expect(otherPortal.status).toBe(403);
    expect(otherPortal.body.error).toBe('unknown_portal');
    const otherCompany = await card(companyPath('999999999'));
    expect(otherCompany.status).toBe(404);
    expect(otherCompany.body.error).toBe('unknown_company');
    const decision = await card(`${companyPath('999999999')}/decision`, {
      method: 'POST',
      body: { action: 'reject' },
    });
    expect(decision.status).toBe(404);
  });

  it('takes a review decision from the card: the CRM record and the decision log show it, with the user', async () => {
    const id = recordWith('needs_review');
    const before = await card(companyPath(id));
    expect(before.status).toBe(200);
    const candidates = (before.body as unknown as CardData).review?.candidates ?? [];
    expect(candidates.length).toBeGreaterThan(1);
    const chosen = candidates[0]!.slug;

    const notOffered = await card(`${companyPath(id)}/decision`, {
      method: 'POST',
      body: { action: 'accept', slug: 'not-a-candidate' },
    });
    expect(notOffered.status).toBe(400);
    expect(notOffered.body.error).toBe('NOT_A_CANDIDATE');
    expect(system.crm.record(id)?.status).toBe('needs_review');

    const res = await card(`${companyPath(id)}/decision`, {
      method: 'POST',
      body: { action: 'accept', slug: chosen },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ companyId: id, status: 'matched', linkSource: 'admin' });
    expect(system.crm.record(id)).toMatchObject({ status: 'matched', slug: chosen, linkSource: 'admin' });
    const [logged] = await system.ctx.decisions.latest(system.installationId, 1);
    expect(logged).toMatchObject({
      action: 'accept',
      recordId: id,
      slug: chosen,
      by: { kind: 'crm-user', id: USER_ID },
    });

    const again = await card(`${companyPath(id)}/decision`, { method: 'POST', body: { action: 'reject' } });
    expect(again.status).toBe(404);
    expect(again.body.error).toBe('NOT_IN_REVIEW');
  });

  it('refuses a malformed decision (400) and changes nothing', async () => {
    const res = await card(`${companyPath(recordWith('matched'))}/decision`, {
      method: 'POST',
      body: { action: 'set', slug: 'x' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_decision');
  });

  it('requests a report from the card: the record shows requested, the decision log names the user', async () => {
    const id = recordWith('no_match');
    const before = (await card(companyPath(id))).body as unknown as CardData;
    expect(before.status).toBe('no_match');
    expect(before.request).toBeNull();
    const submissions = system.sandbox.listSubmissions().length;

    const res = await card(`${companyPath(id)}/request`, { method: 'POST', body: {} });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ companyId: id, status: 'requested', request: { state: 'pending' } });
    expect(system.crm.record(id)?.status).toBe('requested');
    expect(system.sandbox.listSubmissions().length).toBe(submissions + 1);
    const [logged] = await system.ctx.decisions.latest(system.installationId, 1);
    expect(logged).toMatchObject({ action: 'request', recordId: id, by: { kind: 'crm-user', id: USER_ID } });
  });

  it('gives a portal 30 signed requests a minute, then 429 with Retry-After', async () => {
    // A portal without an installation: its requests are counted (they are signed) and refused with 403.
    const portalId = '31337';
    // Unsigned requests naming the portal are refused before they are counted: nobody else spends its budget.
    for (let i = 0; i < 5; i++)
      expect((await card(companyPath('1'), { portalId, unsigned: true })).status).toBe(401);
    for (let i = 0; i < CARD_REQUESTS_PER_MINUTE; i++) {
      expect((await card(companyPath('1'), { portalId })).status).toBe(403);
    }
    const over = await card(companyPath('1'), { portalId });
    expect(over.status).toBe(429);
    const retryAfter = Number(over.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(over.body.retryAfterSeconds).toBe(retryAfter);
    // Each portal has its own budget.
    expect((await card(companyPath(recordWith('matched')))).status).toBe(200);
  });
});
