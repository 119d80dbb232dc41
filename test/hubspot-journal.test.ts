import { describe, expect, it } from 'vitest';
import {
  HUBSPOT_JOURNAL_LIMITS,
  HUBSPOT_JOURNAL_SCOPES,
  HubSpotJournal,
  journalFileEntries,
  journalTokenRequest,
} from '../connectors/hubspot/journal/journal.js';
import { journalFindings } from '../connectors/hubspot/journal/journal-entries.js';
import {
  createLocalHubSpot,
  LOCAL_HUBSPOT_CLIENT_ID,
  LOCAL_HUBSPOT_CLIENT_SECRET,
} from '../connectors/hubspot/local/index.js';
import { HUBSPOT_SCOPES } from '../connectors/hubspot/provider.js';
import { suiteSystem } from './support/local-system.js';
import { recordWhen } from './support/system-state.js';
import { waitFor } from './support/wait.js';

/**
 * Issue 27: webhooks that never arrived are recovered from HubSpot's webhooks journal (2026-03 shapes), read by
 * the change poll with the app's client-credentials token; bounded by the journal's 3 days and a page limit.
 */

describe('the journal reader against the local HubSpot', () => {
  it('subscribes, starts at the newest entry, reads what follows in pages, and restarts at an expired offset', async () => {
    let now = Date.UTC(2026, 10, 20, 8, 0, 0);
    const hubspot = createLocalHubSpot({ privateAppToken: 'pat-journal', now: () => now });
    const server = await hubspot.listen();
    try {
      // A new app token for every call: the token manager's keeping is its own tests' (token-manager tests).
      const request = journalTokenRequest({
        apiUrl: server.url,
        clientId: LOCAL_HUBSPOT_CLIENT_ID,
        clientSecret: LOCAL_HUBSPOT_CLIENT_SECRET,
      });
      const journal = new HubSpotJournal({
        apiUrl: server.url,
        tokens: {
          current: async () => (await request()).accessToken,
          refreshAfterRejection: async () => (await request()).accessToken,
        },
        portalId: hubspot.portalId,
        properties: ['name', 'domain', 'report_slug'],
      });
      const [company] = hubspot.seedCompanies(1);
      await hubspot.setCompanyProperty(company!.id, 'name', 'Before the subscription');
      expect(hubspot.journalSize()).toBe(0);
      await journal.subscribe();
      expect(await journal.latestOffset()).toBeNull();

      await hubspot.setCompanyProperty(company!.id, 'name', 'First');
      await hubspot.setCompanyProperty(company!.id, 'industry', 'not subscribed');
      const start = await journal.latestOffset();
      expect(start).not.toBeNull();
      const total = HUBSPOT_JOURNAL_LIMITS.batchCount * HUBSPOT_JOURNAL_LIMITS.maxBatches + 50;
      for (let i = 0; i < total; i++) await hubspot.setCompanyProperty(company!.id, 'name', `Name ${i}`);

      // One pass reads at most maxBatches batches; the next pass goes on from where it stopped.
      const first = await journal.readAfter(start);
      expect(first.entries).toHaveLength(total - 50);
      expect(first.restarted).toBe(false);
      const second = await journal.readAfter(first.offset);
      expect(second.entries).toHaveLength(50);
      expect(journalFindings(second.entries, hubspot.portalId).changes.at(-1)).toEqual({
        kind: 'renamed',
        recordId: company!.id,
      });
      expect((await journal.readAfter(second.offset)).entries).toEqual([]);

      // Four days later the saved offset has left the journal (3 days): the pass starts at the earliest entry.
      now += 4 * 24 * 3_600_000;
      await hubspot.setCompanyProperty(company!.id, 'domain', 'later.example');
      const late = await journal.readAfter(second.offset);
      expect(late.restarted).toBe(true);
      expect(late.entries).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it("asks the client-credentials token for the companies' read scope, without which a subscription is refused", async () => {
    const hubspot = createLocalHubSpot({ privateAppToken: 'pat-journal-scopes' });
    const server = await hubspot.listen();
    try {
      const token = async (scope: string) => {
        const res = await fetch(`${server.url}/oauth/2026-03/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            grant_type: 'client_credentials',
            client_id: LOCAL_HUBSPOT_CLIENT_ID,
            client_secret: LOCAL_HUBSPOT_CLIENT_SECRET,
            scope,
          }),
        });
        return ((await res.json()) as { access_token: string }).access_token;
      };
      const subscribe = async (scope: string) =>
        (
          await fetch(`${server.url}/webhooks-journal/subscriptions/2026-03`, {
            method: 'POST',
            headers: { authorization: `Bearer ${await token(scope)}`, 'content-type': 'application/json' },
            body: JSON.stringify({
              subscriptionType: 'OBJECT',
              portalId: Number(hubspot.portalId),
              objectTypeId: '0-2',
              actions: ['UPDATE'],
              properties: ['name'],
            }),
          })
        ).status;
      const journalOnly = HUBSPOT_JOURNAL_SCOPES.filter((s) => s.startsWith('developer.'));
      expect(await subscribe(journalOnly.join(' '))).toBe(403);
      expect(HUBSPOT_JOURNAL_SCOPES).toContain('crm.objects.companies.read');
      expect(await subscribe(HUBSPOT_JOURNAL_SCOPES.join(' '))).toBe(200);
      // The token carries nothing the app does not list at install.
      for (const scope of HUBSPOT_JOURNAL_SCOPES.filter((s) => !s.startsWith('developer.')))
        expect(HUBSPOT_SCOPES).toContain(scope);
    } finally {
      await server.close();
    }
  });

  it('reads entries of other shapes as "look again", and other portals and objects as nothing', () => {
    const entries = journalFileEntries(
      [
        JSON.stringify({ objectId: 11, objectTypeId: '0-2', portalId: 7, changeType: 'UPDATE' }),
        JSON.stringify({ objectId: '12', portalId: 8 }),
        JSON.stringify({ objectId: 13, objectTypeId: '0-1' }),
        'not json',
      ].join('\n'),
    );
    expect(journalFindings(entries, '7')).toEqual({ changes: [], reread: ['11'] });
    expect(journalFileEntries('{"results": [{"objectId": 1}]}')).toEqual([{ objectId: 1 }]);
  });
});

describe('a webhook that never arrived', () => {
  const system = suiteSystem(
    {
      companies: 20,
      logLevel: 'silent',
      // Every 1.2 s here; minutes in production.
      env: { HUBSPOT_JOURNAL_MINUTES: '0.02' },
    },
    { firstRunEnded: true },
  );

  it("reaches the record through the journal: a person's slug, sent to no webhook", async () => {
    const calls = () => system.hubspot.stats().calls;
    await waitFor('the journal subscription and its start', async () =>
      (calls()['journal.latest'] ?? 0) > 0 ? true : undefined,
    );
    const record = system.recordIds.find((id) => system.crm.record(id)?.status === 'no_match')!;
    expect(system.crm.record(record)?.linkSource).not.toBe('person');
    const slug = system.sandbox.listReports().find((r) => r.published)!.slug;
    // notify: false: the change is made in HubSpot, and its webhook is lost.
    await system.hubspot.setCompanyProperty(record, 'report_slug', slug);
    const after = await recordWhen(
      system,
      record,
      (r) => r.linkSource === 'person',
      'the slug set in HubSpot to be taken as the person’s',
      30_000,
      200,
    );
    expect(after).toMatchObject({ slug, linkSource: 'person' });
    expect(system.hubspot.stats().webhooksSent).toBe(0);
  }, 60_000);
});
