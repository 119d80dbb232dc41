import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HubSpotPayloadError, HubSpotSignatureError } from '../connectors/hubspot/errors.js';
import { parseHubSpotEvents, toCrmChanges } from '../connectors/hubspot/webhooks/webhook-events.js';
import { createHubSpotWebhookRouter } from '../connectors/hubspot/webhooks/webhook-routes.js';
import { verifyHubSpotSignatureV3 } from '../connectors/hubspot/webhooks/webhook-signature.js';
import type { CrmChange } from '../src/crm/connector.js';

/** Independent of the code under test: the scheme as HubSpot documents it. */
function sign(secret: string, method: string, uri: string, body: string, timestamp: string): string {
  return createHmac('sha256', secret).update(`${method}${uri}${body}${timestamp}`).digest('base64');
}

function reasonOf(fn: () => void): string | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof HubSpotSignatureError) return err.reason;
    throw err;
  }
  return undefined;
}

describe('verifyHubSpotSignatureV3', () => {
  // Published vector: HubSpot/hubspot-api-python tests/spec/utils/test_signature.py (test_get_signature__v3).
  const published = {
    clientSecret: 'yyyyyyyy-yyyy-yyyy-yyyy-yyyyyyyyyyyy',
    body: "{'example_field':'example_value'}",
    url: 'https://www.example.com/webhook_uri',
    method: 'POST',
    timestamp: '15000000',
    signature: 'HPW73RUtKmcYoEDADG0s6MmGFWUzWJKAW07r8RDgcQw=',
  };
  const input = (over: Partial<Parameters<typeof verifyHubSpotSignatureV3>[0]> = {}) => ({
    method: published.method,
    url: published.url,
    rawBody: Buffer.from(published.body),
    timestampHeader: published.timestamp,
    signatureHeader: published.signature,
    clientSecret: published.clientSecret,
    now: Number(published.timestamp) + 1_000,
    ...over,
  });

  it("accepts HubSpot's published v3 example", () => {
    expect(() => verifyHubSpotSignatureV3(input())).not.toThrow();
  });

  it('refuses a tampered method, URL, body, timestamp or secret', () => {
    expect(reasonOf(() => verifyHubSpotSignatureV3(input({ method: 'PUT' })))).toBe('signature_mismatch');
    expect(
      reasonOf(() => verifyHubSpotSignatureV3(input({ url: 'https://www.example.com/webhook_uri2' }))),
    ).toBe('signature_mismatch');
    expect(
      reasonOf(() =>
        verifyHubSpotSignatureV3(input({ rawBody: Buffer.from("{'example_field':'example_valuf'}") })),
      ),
    ).toBe('signature_mismatch');
    expect(reasonOf(() => verifyHubSpotSignatureV3(input({ timestampHeader: '15000001' })))).toBe(
      'signature_mismatch',
    );
    expect(reasonOf(() => verifyHubSpotSignatureV3(input({ clientSecret: 'another-secret' })))).toBe(
      'signature_mismatch',
    );
    expect(reasonOf(() => verifyHubSpotSignatureV3(input({ signatureHeader: 'c2hvcnQ=' })))).toBe(
      'signature_mismatch',
    );
  });

  it('refuses timestamps more than 5 minutes old or ahead, and missing headers', () => {
    const ts = Number(published.timestamp);
    expect(reasonOf(() => verifyHubSpotSignatureV3(input({ now: ts + 5 * 60_000 + 1 })))).toBe(
      'timestamp_too_old',
    );
    expect(reasonOf(() => verifyHubSpotSignatureV3(input({ now: ts + 5 * 60_000 })))).toBeUndefined();
    expect(reasonOf(() => verifyHubSpotSignatureV3(input({ now: ts - 5 * 60_000 - 1 })))).toBe(
      'timestamp_in_future',
    );
    expect(reasonOf(() => verifyHubSpotSignatureV3(input({ signatureHeader: undefined })))).toBe(
      'missing_signature',
    );
    expect(reasonOf(() => verifyHubSpotSignatureV3(input({ timestampHeader: undefined })))).toBe(
      'missing_timestamp',
    );
    expect(reasonOf(() => verifyHubSpotSignatureV3(input({ timestampHeader: '15e6' })))).toBe(
      'malformed_timestamp',
    );
  });

  it('decodes the percent-encodings HubSpot decodes before signing, and only those', () => {
    const secret = 's3cret';
    const body = '[]';
    const ts = '1700000000000';
    const signedOver = 'https://app.test/webhooks/hubspot?from=a:b,c&x=%20y';
    const signature = sign(secret, 'POST', signedOver, body, ts);
    const base = {
      method: 'POST',
      rawBody: Buffer.from(body),
      timestampHeader: ts,
      signatureHeader: signature,
      clientSecret: secret,
      now: Number(ts),
    };
    expect(() =>
      verifyHubSpotSignatureV3({ ...base, url: 'https://app.test/webhooks/hubspot?from=a%3Ab%2Cc&x=%20y' }),
    ).not.toThrow();
    // %20 is not in HubSpot's list: decoding it would change what was signed.
    expect(
      reasonOf(() =>
        verifyHubSpotSignatureV3({ ...base, url: 'https://app.test/webhooks/hubspot?from=a:b,c&x= y' }),
      ),
    ).toBe('signature_mismatch');
  });
});

describe('parseHubSpotEvents', () => {
  const event = {
    portalId: 62515,
    objectId: 1,
    subscriptionType: 'company.creation',
    eventId: 1,
    occurredAt: 1,
  };

  it('reads a list of events, ids as strings', () => {
    const [parsed] = parseHubSpotEvents(Buffer.from(JSON.stringify([event])));
    expect(parsed).toMatchObject({ portalId: '62515', objectId: '1', subscriptionType: 'company.creation' });
  });

  it('refuses what is not a list of at most 100 HubSpot events', () => {
    const reason = (body: string) => {
      try {
        parseHubSpotEvents(Buffer.from(body));
      } catch (err) {
        if (err instanceof HubSpotPayloadError) return err.reason;
        throw err;
      }
      return undefined;
    };
    expect(reason('{not json')).toBe('malformed_json');
    expect(reason(JSON.stringify(event))).toBe('not_an_event_list');
    expect(reason(JSON.stringify([{ objectId: 1 }]))).toBe('not_an_event_list');
    expect(reason(JSON.stringify(Array.from({ length: 100 }, () => event)))).toBeUndefined();
    expect(reason(JSON.stringify(Array.from({ length: 101 }, () => event)))).toBe('too_many_events');
  });
});

describe('toCrmChanges', () => {
  it('maps company events of both formats and groups them by portal', () => {
    const events = parseHubSpotEvents(
      JSON.stringify([
        { portalId: 1, objectId: 10, subscriptionType: 'company.creation' },
        {
          portalId: 1,
          objectId: 11,
          subscriptionType: 'company.propertyChange',
          propertyName: 'name',
          propertyValue: 'X',
        },
        {
          portalId: 2,
          objectId: 12,
          subscriptionType: 'object.propertyChange',
          objectTypeId: '0-2',
          propertyName: 'domain',
        },
        {
          portalId: 2,
          objectId: 13,
          subscriptionType: 'company.propertyChange',
          propertyName: 'report_slug',
          propertyValue: 'acme',
          changeSource: 'CRM_UI',
          sourceId: 'userId:4242',
        },
        {
          portalId: 2,
          objectId: 14,
          subscriptionType: 'object.propertyChange',
          objectTypeId: '0-2',
          propertyName: 'report_slug',
          propertyValue: '',
        },
        { portalId: 1, objectId: 15, subscriptionType: 'object.deletion', objectTypeId: '0-2' },
        {
          portalId: 1,
          objectId: 20,
          subscriptionType: 'company.merge',
          primaryObjectId: 20,
          mergedObjectIds: [21, 22],
          newObjectId: 20,
        },
        // Ignored: other objects, other properties, other event kinds.
        { portalId: 1, objectId: 30, subscriptionType: 'contact.creation' },
        { portalId: 1, objectId: 31, subscriptionType: 'object.creation', objectTypeId: '0-1' },
        { portalId: 1, objectId: 32, subscriptionType: 'company.propertyChange', propertyName: 'industry' },
        // A company back from the recycling bin is handled like a creation.
        { portalId: 1, objectId: 33, subscriptionType: 'company.restore' },
        { portalId: 2, objectId: 34, subscriptionType: 'object.restore', objectTypeId: '0-2' },
      ]),
    );
    const changes = toCrmChanges(events);
    expect([...changes.keys()].sort()).toEqual(['1', '2']);
    expect(changes.get('1')).toEqual<CrmChange[]>([
      { kind: 'created', recordId: '10' },
      { kind: 'renamed', recordId: '11' },
      { kind: 'deleted', recordId: '15' },
      { kind: 'merged', recordId: '20', mergedInto: '20', mergedIds: ['21', '22'] },
      { kind: 'created', recordId: '33' },
    ]);
    expect(changes.get('2')).toEqual<CrmChange[]>([
      { kind: 'domainChanged', recordId: '12' },
      // Who changed it travels with the change, for the decision log.
      { kind: 'slugChanged', recordId: '13', slug: 'acme', by: 'userId:4242' },
      { kind: 'slugChanged', recordId: '14', slug: null },
      { kind: 'created', recordId: '34' },
    ]);
  });

  it('treats a merge that created a new record as the primary being gone too', () => {
    const [, list] = [
      ...toCrmChanges(
        parseHubSpotEvents(
          JSON.stringify([
            {
              portalId: 1,
              objectId: 40,
              subscriptionType: 'object.merge',
              objectTypeId: '0-2',
              primaryObjectId: 40,
              mergedObjectIds: [41],
              newObjectId: 42,
            },
          ]),
        ),
      ),
    ][0]!;
    expect(list).toEqual([{ kind: 'merged', recordId: '40', mergedInto: '42', mergedIds: ['41', '40'] }]);
  });
});

describe('createHubSpotWebhookRouter', () => {
  const secret = 'webhook-secret';
  const publicUrl = 'https://public.example.test';
  const received: { portalId: string; changes: CrmChange[] }[] = [];
  let onChanges: (portalId: string, changes: CrmChange[]) => Promise<void> = async () => {};
  let server: Server;
  let base: string;

  beforeAll(async () => {
    const app = express();
    app.use(
      createHubSpotWebhookRouter({
        clientSecret: secret,
        publicUrl,
        onChanges: (portalId, changes) => onChanges(portalId, changes),
      }),
    );
    server = createServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const post = (
    body: string,
    opts: { ts?: string; signedUrl?: string; signature?: string; path?: string } = {},
  ) => {
    const path = opts.path ?? '/webhooks/hubspot';
    const ts = opts.ts ?? String(Date.now());
    const signature =
      opts.signature ?? sign(secret, 'POST', opts.signedUrl ?? `${publicUrl}${path}`, body, ts);
    return fetch(`${base}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-hubspot-request-timestamp': ts,
        'x-hubspot-signature-v3': signature,
      },
      body,
    });
  };

  const events = JSON.stringify([
    { portalId: 7, objectId: 1, subscriptionType: 'object.creation', objectTypeId: '0-2' },
    { portalId: 8, objectId: 2, subscriptionType: 'company.deletion' },
    { portalId: 7, objectId: 3, subscriptionType: 'contact.creation' },
  ]);

  it('verifies against the public URL, passes each portal its changes and answers 204', async () => {
    received.length = 0;
    onChanges = async (portalId, changes) => {
      received.push({ portalId, changes });
    };
    const res = await post(events, { path: '/webhooks/hubspot?source=test' });
    expect(res.status).toBe(204);
    expect(received.sort((a, b) => a.portalId.localeCompare(b.portalId))).toEqual([
      { portalId: '7', changes: [{ kind: 'created', recordId: '1' }] },
      { portalId: '8', changes: [{ kind: 'deleted', recordId: '2' }] },
    ]);
  });

  it('answers only after every onChanges has resolved', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let started = 0;
    onChanges = async () => {
      started++;
      await gate;
    };
    let answered = false;
    const pending = post(events).then((res) => {
      answered = true;
      return res;
    });
    await expect.poll(() => started).toBe(2);
    expect(answered).toBe(false);
    release();
    expect((await pending).status).toBe(204);
  });

  it('answers 503 when the changes cannot be recorded, so HubSpot retries', async () => {
    onChanges = async () => {
      throw new Error('Redis is down');
    };
    const res = await post(events);
    expect(res.status).toBe(503);
  });

  it('answers 401 for a bad signature, a URL other than the public one, or an old timestamp', async () => {
    onChanges = async () => {
      throw new Error('must not be called');
    };
    expect(
      (
        await post(events, {
          signature: sign('wrong', 'POST', `${publicUrl}/webhooks/hubspot`, events, String(Date.now())),
        })
      ).status,
    ).toBe(401);
    expect((await post(events, { signedUrl: `${base}/webhooks/hubspot` })).status).toBe(401);
    const old = await post(events, { ts: String(Date.now() - 6 * 60_000) });
    expect(old.status).toBe(401);
    expect(await old.json()).toMatchObject({ reason: 'timestamp_too_old' });
  });

  it('answers 400 for a signed body that is not an event list, and 413 over 1 MB', async () => {
    onChanges = async () => {};
    const bad = await post('{"not":"a list"}');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ reason: 'not_an_event_list' });
    const big = await post(`[${'"x",'.repeat(300_000)}"x"]`);
    expect(big.status).toBe(413);
  });
});
