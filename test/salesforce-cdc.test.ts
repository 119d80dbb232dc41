import avro from 'avsc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changesOfEvents, isOwnWrite } from '../connectors/salesforce/changes/cdc-changes.js';
import {
  bitmapPositions,
  type ChangeEvent,
  EventSchemas,
  expandBitmapFields,
} from '../connectors/salesforce/changes/pubsub/change-events.js';
import {
  PubSubClient,
  pubSubErrorCode,
  type SubscribeCall,
} from '../connectors/salesforce/changes/pubsub/client.js';
import {
  ACCOUNT_CHANGE_TOPIC,
  type FetchResponse,
  REPLAY_ID_CORRUPTED,
} from '../connectors/salesforce/changes/pubsub/proto.js';
import { LocalPubSub } from '../connectors/salesforce/local/pubsub-server.js';
import { createLocalSalesforce, type LocalSalesforce } from '../connectors/salesforce/local/server.js';
import { CALL_OPTIONS_CLIENT, DEFAULT_API_VERSION } from '../connectors/salesforce/provider.js';
import { fixedTokens, localSalesforceConnector, openGate } from './support/local-salesforce-connector.js';

/**
 * Change Data Capture through the Pub/Sub API, client and local server on the published proto: Avro payloads
 * decoded with the schema GetSchema gives, header bitmaps expanded to field names, replay ids that resume a
 * subscription, a replay id the bus no longer keeps refused with Salesforce's error code, gap and overflow
 * events, and the events' meaning for the pipeline.
 */

describe('header bitmaps', () => {
  it('reads positions from the lowest bit, and compound fields from their parent position', () => {
    expect(bitmapPositions('0x01')).toEqual([0]);
    expect(bitmapPositions('0x650004E0')).toEqual([5, 6, 7, 10, 24, 26, 29, 30]);
    const type = avro.Type.forSchema(
      {
        type: 'record',
        name: 'E',
        fields: [
          { name: 'ChangeEventHeader', type: 'string' },
          { name: 'Name', type: ['null', 'string'] },
          {
            name: 'BillingAddress',
            type: [
              'null',
              {
                type: 'record',
                name: 'Address',
                fields: [
                  { name: 'City', type: ['null', 'string'] },
                  { name: 'Country', type: ['null', 'string'] },
                ],
              },
            ],
          },
        ],
      },
      { wrapUnions: false },
    ) as avro.types.RecordType;
    expect(expandBitmapFields(type, ['0x02', '2-0x02'])).toEqual(['Name', 'BillingAddress.Country']);
  });
});

describe('the connector’s own writes among the events', () => {
  const recordId = '001000000000001AAA';
  const person = '005000000000002AAA';
  const ours = `com/salesforce/api/rest/${DEFAULT_API_VERSION};client=${CALL_OPTIONS_CLIENT}`;
  const update = (changeOrigin: string, values: Record<string, unknown>): ChangeEvent => ({
    entityName: 'Account',
    recordIds: [recordId],
    changeType: 'UPDATE',
    changeOrigin,
    commitUser: person,
    commitTimestamp: 0,
    changedFields: [...Object.keys(values), 'LastModifiedDate'],
    values,
  });

  it('drops an update made under the connector’s client id, whatever fields it changed', () => {
    const events = [
      update(ours, { Name: 'Acme GmbH' }),
      update(`com/salesforce/api/bulkapi/${DEFAULT_API_VERSION};client=${CALL_OPTIONS_CLIENT}`, {
        Report_Slug__c: 'acme',
        Website: 'https://acme.example',
      }),
    ];
    expect(changesOfEvents(events, new Map()).changes).toEqual([]);
  });

  it('keeps the same change from another client, from a call naming none, or from a person', () => {
    const events = [
      update(`com/salesforce/api/rest/${DEFAULT_API_VERSION};client=dataloader`, { Name: 'Acme GmbH' }),
      update(`com/salesforce/api/rest/${DEFAULT_API_VERSION};client=${CALL_OPTIONS_CLIENT}-staging`, {
        Name: 'Acme AG',
      }),
      update(`com/salesforce/api/soap/${DEFAULT_API_VERSION}`, { Name: 'Acme SE' }),
      update('', { Name: 'Acme Ltd' }),
    ];
    expect(changesOfEvents(events, new Map()).changes).toEqual(
      Array.from({ length: 4 }, () => ({ kind: 'renamed', recordId })),
    );
  });

  it('takes a person’s slug edit, which names no client, as theirs', () => {
    expect(changesOfEvents([update('', { Report_Slug__c: 'acme' })], new Map()).changes).toEqual([
      { kind: 'slugChanged', recordId, slug: 'acme', by: person },
    ]);
  });

  it('still drops a stamped update that names no client (an earlier release’s write, another tool’s)', () => {
    const stamped = update(`com/salesforce/api/rest/${DEFAULT_API_VERSION}`, {
      Report_Slug__c: 'acme',
      Report_Synced_At__c: 1,
    });
    expect(changesOfEvents([stamped], new Map()).changes).toEqual([]);
  });

  it('reads the client id only from the origin’s options', () => {
    expect(isOwnWrite(ours)).toBe(true);
    expect(isOwnWrite(`com/salesforce/api/rest/${DEFAULT_API_VERSION}; client=${CALL_OPTIONS_CLIENT}`)).toBe(
      true,
    );
    expect(isOwnWrite(`com/salesforce/api/${CALL_OPTIONS_CLIENT}/${DEFAULT_API_VERSION}`)).toBe(false);
    expect(isOwnWrite('')).toBe(false);
  });
});

describe('the local Pub/Sub API with the client', () => {
  let sf: LocalSalesforce;
  let close: () => Promise<void>;
  let client: PubSubClient;
  let session: { accessToken: string; instanceUrl: string; tenantId: string };
  let schemas: EventSchemas;
  let accountId: string;

  beforeAll(async () => {
    sf = createLocalSalesforce({});
    const listening = await sf.pubsub.listen(0);
    close = listening.close;
    client = new PubSubClient(listening.endpoint, { plaintext: true });
    session = { accessToken: sf.issueAccessToken(), instanceUrl: 'http://127.0.0.1', tenantId: sf.orgId };
    schemas = new EventSchemas((id) => client.getSchema(session, id));
    sf.org.upsertCustomField({
      fullName: 'Account.Report_Slug__c',
      label: 'Report slug',
      type: 'Text',
      length: 255,
    });
    accountId = sf.seedAccounts([{ Name: 'Acme', Website: 'https://acme.example' }])[0]!.Id;
  });

  afterAll(async () => {
    client.close();
    await close();
  });

  /** Waits until the server has taken one more FetchRequest (the subscription's start point is set). */
  async function subscribed(before: number): Promise<void> {
    while (sf.pubsub.counts().fetchRequests <= before) await new Promise((r) => setTimeout(r, 10));
  }

  /** Subscribes and collects decoded events until `count` arrived. */
  async function take(
    call: SubscribeCall,
    count: number,
  ): Promise<{ events: ChangeEvent[]; replayIds: Buffer[] }> {
    const events: ChangeEvent[] = [];
    const replayIds: Buffer[] = [];
    await new Promise<void>((resolve, reject) => {
      call.on('data', async (r: FetchResponse) => {
        for (const e of r.events) {
          events.push(await schemas.decode(e.event.schema_id, e.event.payload));
          replayIds.push(e.replay_id);
        }
        if (events.length >= count) resolve();
      });
      call.on('error', reject);
    });
    return { events, replayIds };
  }

  it('delivers a person’s edit as an Avro UPDATE event whose changed fields name the slug', async () => {
    const before = sf.pubsub.counts().fetchRequests;
    const call = client.subscribe(session);
    call.write({ topic_name: ACCOUNT_CHANGE_TOPIC, replay_preset: 'LATEST', num_requested: 10 });
    await subscribed(before);
    sf.updateAccountAsPerson(accountId, { Report_Slug__c: 'acme-gmbh', Name: 'Acme GmbH' });
    const { events } = await take(call, 1);
    call.on('error', () => undefined);
    call.cancel();
    expect(events[0]).toMatchObject({
      entityName: 'Account',
      changeType: 'UPDATE',
      recordIds: [accountId],
      commitUser: sf.personUserId,
      changeOrigin: '',
    });
    expect(events[0]!.changedFields).toEqual(
      expect.arrayContaining(['Name', 'LastModifiedDate', 'Report_Slug__c']),
    );
    expect(events[0]!.values.Report_Slug__c).toBe('acme-gmbh');
    expect(changesOfEvents(events, new Map()).changes).toEqual([
      { kind: 'slugChanged', recordId: accountId, slug: 'acme-gmbh', by: sf.personUserId },
      { kind: 'renamed', recordId: accountId },
    ]);
  });

  it('resumes after a replay id, and refuses one the bus no longer keeps', async () => {
    const first = client.subscribe(session);
    first.write({ topic_name: ACCOUNT_CHANGE_TOPIC, replay_preset: 'EARLIEST', num_requested: 100 });
    const all = await take(first, 2);
    first.on('error', () => undefined);
    first.cancel();
    sf.updateAccountAsPerson(accountId, { Website: 'https://acme.example.org' });
    const resumed = client.subscribe(session);
    resumed.write({
      topic_name: ACCOUNT_CHANGE_TOPIC,
      replay_preset: 'CUSTOM',
      replay_id: all.replayIds[1]!,
      num_requested: 100,
    });
    const after = await take(resumed, 1);
    resumed.on('error', () => undefined);
    resumed.cancel();
    expect(after.events[0]!.changedFields).toContain('Website');

    sf.pubsub.purgeAll();
    const refused = client.subscribe(session);
    refused.write({
      topic_name: ACCOUNT_CHANGE_TOPIC,
      replay_preset: 'CUSTOM',
      replay_id: all.replayIds[0]!,
      num_requested: 1,
    });
    const err = await new Promise<unknown>((resolve) => {
      refused.on('error', resolve);
      refused.on('data', () => undefined);
    });
    expect(pubSubErrorCode(err)).toBe(REPLAY_ID_CORRUPTED);
  });

  it('gives gap and overflow events that ask for a catch-up, and merges as deletes into a survivor', async () => {
    const before = sf.pubsub.counts().fetchRequests;
    const call = client.subscribe(session);
    call.write({ topic_name: ACCOUNT_CHANGE_TOPIC, replay_preset: 'LATEST', num_requested: 10 });
    await subscribed(before);
    sf.pubsub.publishGap('GAP_UPDATE', [accountId]);
    sf.pubsub.publishGap('GAP_OVERFLOW');
    const [other] = sf.seedAccounts([{ Name: 'Acme duplicate' }]);
    sf.mergeAccounts(accountId, [other!.Id]);
    const { events } = await take(call, 5);
    call.on('error', () => undefined);
    call.cancel();
    expect(events.map((e) => e.changeType)).toEqual([
      'GAP_UPDATE',
      'GAP_OVERFLOW',
      'CREATE',
      'DELETE',
      'UPDATE',
    ]);
    const mapped = changesOfEvents(events, new Map([[other!.Id, accountId]]));
    expect(mapped.catchUp).toBe('GAP_UPDATE event');
    expect(mapped.changes).toEqual([
      { kind: 'created', recordId: other!.Id },
      { kind: 'merged', recordId: other!.Id, mergedInto: accountId, mergedIds: [other!.Id] },
    ]);
  });

  it('names the connector’s client in changeOrigin for its REST and Bulk API 2.0 writes, and not for a call without it', async () => {
    const server = await sf.listen();
    try {
      const connector = localSalesforceConnector(
        sf,
        server.url,
        { tokens: fixedTokens(sf), gate: openGate },
        { bulk: { pollIntervalMs: 5, pollTimeoutMs: 10_000 } },
      );
      await connector.ensureFields();
      const before = sf.pubsub.counts().fetchRequests;
      const call = client.subscribe(session);
      call.write({ topic_name: ACCOUNT_CHANGE_TOPIC, replay_preset: 'LATEST', num_requested: 10 });
      await subscribed(before);
      await connector.writeCompanies([{ id: accountId, values: { slug: 'acme-rest' } }]);
      await connector.writeCompaniesBulk([{ id: accountId, values: { slug: 'acme-bulk' } }]);
      // The same write without call options, as another tool (or an earlier release) sends it.
      const plain = await fetch(`${server.url}/services/data/v${DEFAULT_API_VERSION}/composite/sobjects`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${session.accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          allOrNone: false,
          records: [{ attributes: { type: 'Account' }, id: accountId, Report_Slug__c: 'acme-plain' }],
        }),
      });
      expect(plain.status).toBe(200);
      const { events } = await take(call, 3);
      call.on('error', () => undefined);
      call.cancel();
      expect(events.map((e) => [e.changeOrigin, e.commitUser])).toEqual([
        [
          `com/salesforce/api/rest/${DEFAULT_API_VERSION};client=${CALL_OPTIONS_CLIENT}`,
          sf.integrationUserId,
        ],
        [
          `com/salesforce/api/bulkapi/${DEFAULT_API_VERSION};client=${CALL_OPTIONS_CLIENT}`,
          sf.integrationUserId,
        ],
        [`com/salesforce/api/rest/${DEFAULT_API_VERSION}`, sf.integrationUserId],
      ]);
      expect(changesOfEvents(events, new Map()).changes).toEqual([
        { kind: 'slugChanged', recordId: accountId, slug: 'acme-plain', by: sf.integrationUserId },
      ]);
    } finally {
      await server.close();
    }
  });

  it('refuses a session the org did not issue', async () => {
    const call = client.subscribe({ ...session, accessToken: 'not-a-token' });
    call.write({ topic_name: ACCOUNT_CHANGE_TOPIC, num_requested: 1 });
    const err = await new Promise<{ code?: number }>((resolve) => {
      call.on('error', resolve);
      call.on('data', () => undefined);
    });
    expect(err.code).toBe(16); // UNAUTHENTICATED
  });
});

describe('one local Pub/Sub endpoint for several orgs', () => {
  it('gives each stream the events of the org its tenantid names, and refuses an org it does not serve', async () => {
    const orgs = [
      createLocalSalesforce({ orgId: '00D5g00000000A1EAY' }),
      createLocalSalesforce({ orgId: '00D5g00000000B2EAY' }),
    ];
    const endpoint = await LocalPubSub.listenShared();
    for (const org of orgs) endpoint.add(org.pubsub);
    const client = new PubSubClient(endpoint.endpoint, { plaintext: true });
    const sessionOf = (org: LocalSalesforce) => ({
      accessToken: org.issueAccessToken(),
      instanceUrl: 'http://127.0.0.1',
      tenantId: org.orgId,
    });
    try {
      const calls = orgs.map((org) => {
        const call = client.subscribe(sessionOf(org));
        call.write({ topic_name: ACCOUNT_CHANGE_TOPIC, replay_preset: 'LATEST', num_requested: 10 });
        return call;
      });
      while (orgs.some((o) => o.pubsub.openStreams() < 1)) await new Promise((r) => setTimeout(r, 10));
      const firsts = orgs.map((org, i) => {
        const received = new Promise<number>((resolve) =>
          calls[i]!.once('data', (r: FetchResponse) => resolve(r.events.length)),
        );
        org.seedAccounts([{ Name: `Org ${i}` }]);
        return received;
      });
      expect(await Promise.all(firsts)).toEqual([1, 1]);
      expect(orgs.map((o) => o.pubsub.counts().delivered)).toEqual([1, 1]);

      const stranger = createLocalSalesforce({ orgId: '00D5g00000000C3EAY' });
      const refused = client.subscribe(sessionOf(stranger));
      refused.write({ topic_name: ACCOUNT_CHANGE_TOPIC, num_requested: 1 });
      const err = await new Promise<{ code?: number }>((resolve) => {
        refused.on('error', resolve);
        refused.on('data', () => undefined);
      });
      expect(err.code).toBe(7); // PERMISSION_DENIED
      for (const call of calls) {
        call.on('error', () => undefined);
        call.cancel();
      }
    } finally {
      client.close();
      await endpoint.close();
    }
  });
});
