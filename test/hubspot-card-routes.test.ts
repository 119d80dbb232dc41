import { describe, expect, it } from 'vitest';
import { LOCAL_HUBSPOT_PORTAL_ID } from '../connectors/hubspot/local/local-hubspot.js';
import { demoCompanies } from '../local/demo-seed.js';
import { loadFixtureReports } from '../src/sandbox/index.js';
import { CookieJar } from './support/cookie-jar.js';
import { suiteSystem } from './support/local-system.js';

/**
 * The HubSpot app card's actions end to end against the local system: a seller signs in with HubSpot from the
 * card's page, and a decision or report request taken there reaches the CRM record and the decision log with
 * the user HubSpot's token names. The card reads its record through HubSpot itself, so the connector serves
 * no card data: the `hubspot.fetch` routes that trusted a portal and user from the URL are gone.
 */

const USER_ID = '4242';

const system = suiteSystem(
  { crm: 'hubspot', companies: demoCompanies(loadFixtureReports(), 20) },
  { firstRunEnded: true, timeoutMs: 180_000 },
);

function recordWith(status: string): string {
  const i = system.seed.findIndex((c) => c.expected.status === status);
  const id = system.recordIds[i];
  if (!id) throw new Error(`no seeded ${status} company`);
  return id;
}

/** HubSpot's sign-in for the company, as `USER_ID`: the callback's page, and the browser holding its session. */
async function signIn(companyId: string) {
  system.hubspot.signInAs({ userId: USER_ID, email: 'seller@example.test' });
  const jar = new CookieJar();
  const query = `portalId=${LOCAL_HUBSPOT_PORTAL_ID}&companyId=${companyId}`;
  const start = await jar.fetch(`${system.appUrl}/oauth/hubspot-card/sign-in?${query}`);
  expect(start.status).toBe(302);
  const consent = await jar.fetch(start.headers.get('location')!);
  expect(consent.status).toBe(302);
  const page = await jar.fetch(consent.headers.get('location')!);
  return { jar, status: page.status, text: await page.text() };
}

function act(jar: CookieJar, form: Record<string, string>) {
  return jar.fetch(`${system.appUrl}/oauth/hubspot-card/act`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
}

describe('HubSpot card actions, taken by a user HubSpot signed in', () => {
  it('serves no card data to a hubspot.fetch request, whatever portal its URL names', async () => {
    const id = recordWith('matched');
    const res = await fetch(
      `${system.appUrl}/cards/hubspot/companies/${id}?portalId=${LOCAL_HUBSPOT_PORTAL_ID}&userId=1`,
    );
    expect(res.status).toBe(404);
  });

  it("the server lets HubSpot's pages frame the card's page, and no one frame the others", async () => {
    const act = await fetch(
      `${system.appUrl}/oauth/hubspot-card/act?portalId=${LOCAL_HUBSPOT_PORTAL_ID}&companyId=${recordWith('matched')}`,
    );
    expect(act.status).toBe(200);
    expect(act.headers.get('content-security-policy')).toContain('frame-ancestors https://app.hubspot.com');
    expect(act.headers.get('x-frame-options')).toBeNull();
    const page = await signIn(recordWith('matched'));
    expect(page.status).toBe(200);
  });

  it('takes a review decision: the CRM record and the decision log show it, with the signed-in user', async () => {
    const id = recordWith('needs_review');
    const first = await signIn(id);
    expect(first.status).toBe(200);
    const offered = [...first.text.matchAll(/name="slug" value="([^"]+)"/g)].map((m) => m[1]!);
    expect(offered.length).toBeGreaterThan(1);
    const chosen = offered[0]!;

    const notOffered = await act(first.jar, { action: 'accept', slug: 'not-a-candidate' });
    expect(notOffered.status).toBe(400);
    expect(system.crm.record(id)?.status).toBe('needs_review');

    const second = await signIn(id);
    const res = await act(second.jar, { action: 'accept', slug: chosen });
    expect(res.status).toBe(200);
    expect(system.crm.record(id)).toMatchObject({ status: 'matched', slug: chosen, linkSource: 'admin' });
    const [logged] = await system.ctx.decisions.latest(system.installationId, 1);
    expect(logged).toMatchObject({
      action: 'accept',
      recordId: id,
      slug: chosen,
      by: { kind: 'crm-user', id: USER_ID },
    });

    const third = await signIn(id);
    expect(third.text).toContain('Nothing to decide');
    const again = await act(third.jar, { action: 'reject' });
    expect(again.status).toBe(404);
  });

  it('requests a report: the record shows requested, the decision log names the signed-in user', async () => {
    const id = recordWith('no_match');
    const submissions = system.sandbox.listSubmissions().length;
    const page = await signIn(id);
    expect(page.text).toContain('Request a report');
    const res = await act(page.jar, { action: 'request' });
    expect(res.status).toBe(200);
    expect(system.crm.record(id)?.status).toBe('requested');
    expect(system.sandbox.listSubmissions().length).toBe(submissions + 1);
    const [logged] = await system.ctx.decisions.latest(system.installationId, 1);
    expect(logged).toMatchObject({ action: 'request', recordId: id, by: { kind: 'crm-user', id: USER_ID } });
  });

  it('a company the portal does not have: 404, nothing written', async () => {
    const page = await signIn('999999999');
    expect(page.status).toBe(404);
    expect((await act(page.jar, { action: 'reject' })).status).toBe(401);
  });
});
