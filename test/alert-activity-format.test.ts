import nock from 'nock';
import { afterEach, describe, expect, it } from 'vitest';
import { createHubSpotConnector } from '../connectors/hubspot/create-connector.js';
import { HUBSPOT_DEFAULT_API_VERSION, hubspotPaths } from '../connectors/hubspot/provider.js';
import { createLocalSalesforce } from '../connectors/salesforce/local/index.js';
import { alertActivity } from '../src/alerts/alert-activity.js';
import { alertFromEvent } from '../src/alerts/alert-event.js';
import type { RecordActivity } from '../src/crm/connector.js';
import type { RequestGate } from '../src/crm/request-gate.js';
import { fixedTokens, localSalesforceConnector } from './support/local-salesforce-connector.js';

/**
 * Issue 26, point 6: text from an `alert.fired` event reaches a HubSpot note (HTML) escaped, so a tag in it
 * is shown and never rendered, with its line breaks as `<br>`; a Salesforce Task (plain text) gets the text as
 * written, line breaks kept. From the event body, through the activity the pipeline builds, to the request each
 * CRM receives.
 */

const HOSTILE = {
  type: 'alert.fired',
  created_at: '2026-11-26T10:00:00Z',
  data: {
    slug: 'acme',
    severity: 'high',
    title: 'Score fell <script>alert(1)</script>',
    message:
      'Line one <img src=x onerror="alert(2)">\nLine two <a href="https://evil.example/?a=1&b=2">click</a>\r\nLine three',
  },
};

function activityOfEvent(): RecordActivity {
  const alert = alertFromEvent(HOSTILE);
  return alertActivity({
    slug: 'acme',
    line: alert.line,
    ...(alert.text ? { text: alert.text } : {}),
    at: alert.at,
  });
}

const gate: RequestGate = { acquire: async () => {}, pause: async () => {} };

afterEach(() => {
  nock.cleanAll();
});

describe('alert activities, formatted for each CRM', () => {
  it('HubSpot: the note body is escaped HTML, line breaks as <br>', async () => {
    const API = 'https://api.hubspot.test';
    const P = hubspotPaths(HUBSPOT_DEFAULT_API_VERSION);
    let sent: { properties: { hs_note_body: string } } | null = null;
    nock(API)
      .get(P.noteCompanyLabels)
      .reply(200, { results: [{ category: 'HUBSPOT_DEFINED', typeId: 190, label: null }] });
    nock(API)
      .post(P.notes, (body: { properties: { hs_note_body: string } }) => {
        sent = body;
        return true;
      })
      .reply(201, { id: '1' });
    const connector = createHubSpotConnector({
      apiUrl: API,
      tokens: { current: async () => 't', refreshAfterRejection: async () => 't' },
      gate,
      sleep: async () => {},
      random: () => 0.5,
    });
    await connector.createActivity('101', activityOfEvent());
    const html = sent!.properties.hs_note_body;
    // Nothing the event carried becomes a tag or an attribute.
    expect(html).not.toMatch(/<(script|img|a)\b/i);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('&lt;img src=x onerror=&quot;alert(2)&quot;&gt;');
    expect(html).toContain('&lt;a href=&quot;https://evil.example/?a=1&amp;b=2&quot;&gt;click&lt;/a&gt;');
    // The message's own lines, each on a line of the note.
    expect(html).toMatch(/Line one [^<]*<br>Line two [^<]*&lt;\/a&gt;<br>Line three/);
    expect(html).not.toMatch(/\n/);
    // The only tags are the connector's own.
    const tags = html.match(/<[^>]+>/g) ?? [];
    expect(new Set(tags)).toEqual(new Set(['<p>', '</p>', '<strong>', '</strong>', '<br>']));
  });

  it('Salesforce: the Task keeps the text as written, its Description keeps the line breaks', async () => {
    const local = createLocalSalesforce({ queryPageSize: 50 });
    const server = await local.listen();
    try {
      const [account] = local.seedAccounts([{ Name: 'Acme' }]);
      const connector = localSalesforceConnector(
        local,
        server.url,
        { tokens: fixedTokens(local), gate, apiVersion: '63.0' },
        { bulk: { pollIntervalMs: 5 } },
      );
      await connector.createActivity(account!.Id, activityOfEvent());
      const [task] = local.org.tasksFor(account!.Id);
      expect(task!.Subject).toBe(
        'Report alert: High alert: Score fell <script>alert(1)</script> — Line one <img src=x onerror="alert(2)"> Line two <a href="https://evil.example/?a=1&b=2">click</a> Line three',
      );
      expect(task!.Description).toBe(
        [
          'Score fell <script>alert(1)</script>',
          '',
          'Line one <img src=x onerror="alert(2)">',
          'Line two <a href="https://evil.example/?a=1&b=2">click</a>',
          'Line three',
          '',
          'Report: acme',
          'Fired at: 2026-11-26T10:00:00.000Z',
        ].join('\n'),
      );
    } finally {
      await server.close();
    }
  });

  it('an alert with neither title nor message has its line as the body', () => {
    const alert = alertFromEvent({ type: 'alert.fired', data: { slug: 'acme', kind: 'score_drop' } });
    expect(alert.text).toBeUndefined();
    const activity = alertActivity({ slug: 'acme', line: alert.line, at: alert.at });
    expect(activity.body.split('\n')[0]).toBe('Score drop');
  });
});
