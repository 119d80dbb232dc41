import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import {
  ACCOUNT_CHANGE_TOPIC,
  ERROR_CODE_TRAILER,
  type FetchRequest,
  type FetchResponse,
  MAX_NUM_REQUESTED,
  pubSubService,
  REPLAY_ID_CORRUPTED,
  type SchemaInfo,
  type SchemaRequest,
} from '../changes/pubsub/proto.js';
import { AccountEventSchema, type LocalChangeType, type PublishedHeader } from './change-event-schema.js';
import type { ChangeEventSelection } from './change-event-selection.js';
import type { LocalAccountChange, LocalOrg, StoredAccount } from './org.js';

/**
 * The local org's Pub/Sub API: a gRPC server on Salesforce's published proto, serving `/data/AccountChangeEvent`
 * (Change Data Capture for Accounts) with Avro payloads, replay ids, GetSchema and GetTopic. Every Account change
 * of the org (a person's edit, the connector's writes through REST, creates, deletes, merges, undeletes) becomes
 * an event on its bus, kept for `retentionMs` (72 hours, as Salesforce keeps change events). Tests force a gap or
 * an overflow event, drop every stream, forget old events (a replay id too old) or switch CDC off for the org.
 * While Account is not selected for Change Data Capture (change-event-selection.ts), its changes make no event
 * and a subscription to its channel is refused, as the channel of an unselected entity is.
 */

const RETENTION_MS = 72 * 3_600_000;

interface BusEvent {
  replay: bigint;
  at: number;
  schemaId: string;
  payload: Buffer;
  id: string;
}

interface Subscription {
  call: grpc.ServerDuplexStream<FetchRequest, FetchResponse>;
  /** The next replay to deliver; null until the first FetchRequest. */
  next: bigint | null;
  pending: number;
}

export function replayBytes(replay: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(replay);
  return b;
}

function grpcError(code: grpc.status, details: string, errorCode?: string): Partial<grpc.StatusObject> {
  const metadata = new grpc.Metadata();
  if (errorCode) metadata.set(ERROR_CODE_TRAILER, errorCode);
  return { code, details, metadata };
}

export interface ListeningPubSub {
  endpoint: string;
  close(): Promise<void>;
}

export interface SharedPubSubEndpoint extends ListeningPubSub {
  add(bus: LocalPubSub): void;
}

export class LocalPubSub {
  /** Org without Change Data Capture for Account (edition, entity limit): Subscribe is refused. */
  enabled = true;
  retentionMs = RETENTION_MS;
  /** How often an idle stream gets an empty response with the latest replay id (Salesforce: within 270 s). */
  keepaliveMs = 270_000;
  private readonly events: BusEvent[] = [];
  private lastReplay = 0n;
  /** Replays up to this one were purged: a CUSTOM replay id below it is refused. */
  private purgedThrough = 0n;
  private readonly schemas = new Map<string, AccountEventSchema>();
  private readonly subscriptions = new Set<Subscription>();
  private readonly counters = { subscribes: 0, fetchRequests: 0, schemaRequests: 0, delivered: 0 };
  /** Endpoints serving this org (listen, listenShared): one at least while it is listening. */
  private serving = 0;
  private keepalive: NodeJS.Timeout | null = null;

  constructor(
    private readonly org: LocalOrg,
    private readonly selection: Pick<ChangeEventSelection, 'accountSelected'>,
  ) {
    org.accountChangeListeners.add((change) => this.onAccountChange(change));
  }

  /** Whether the Account channel can be subscribed to: CDC on for the org, and Account selected. */
  private get available(): boolean {
    return this.enabled && this.selection.accountSelected;
  }

  counts(): Readonly<Record<keyof LocalPubSub['counters'], number>> {
    return { ...this.counters };
  }

  /** The replay of the newest event (0n before any): a test reads what came after it, or waits for a stream there. */
  get latestReplay(): bigint {
    return this.lastReplay;
  }

  /** The headers of the events after `replay` that the bus still keeps, oldest first, read from their payloads. */
  headersSince(replay: bigint): PublishedHeader[] {
    return this.events
      .filter((e) => e.replay > replay)
      .map((e) => this.schemas.get(e.schemaId)!.header(e.payload));
  }

  /** A gap event: the header names the records (none for GAP_OVERFLOW), the body carries no values. */
  publishGap(changeType: Extract<LocalChangeType, `GAP_${string}`>, ids: string[] = []): void {
    const recordIds = changeType === 'GAP_OVERFLOW' ? [] : ids;
    // No origin: a gap stands for changes the bus could not describe, whoever made them.
    this.append(changeType, recordIds, [], this.org.integrationUserId, '', null);
  }

  /** Ends every open stream as a lost connection would (UNAVAILABLE). */
  dropStreams(): void {
    for (const s of [...this.subscriptions]) this.fail(s, grpcError(grpc.status.UNAVAILABLE, 'stream reset'));
  }

  /** Forgets every event so far, as the bus does after the retention: their replay ids are refused from now on. */
  purgeAll(): void {
    this.events.length = 0;
    this.purgedThrough = this.lastReplay;
  }

  /** Serves this org's Pub/Sub API on an endpoint of its own. */
  async listen(port = 0, host = '127.0.0.1'): Promise<ListeningPubSub> {
    const endpoint = await LocalPubSub.listenShared(port, host);
    endpoint.add(this);
    return { endpoint: endpoint.endpoint, close: endpoint.close };
  }

  /**
   * One endpoint for several orgs, as Salesforce's one endpoint serves every org: each call goes to the org its
   * `tenantid` names (an endpoint of one org answers every call and refuses a tenant not its own). Orgs join
   * with `add`, also after it started.
   */
  static async listenShared(port = 0, host = '127.0.0.1'): Promise<SharedPubSubEndpoint> {
    const buses = new Map<string, LocalPubSub>();
    const route = (metadata: grpc.Metadata): LocalPubSub | null => {
      const tenant = metadata.get('tenantid')[0];
      const named = typeof tenant === 'string' ? buses.get(tenant) : undefined;
      return named ?? (buses.size === 1 ? [...buses.values()][0]! : null);
    };
    const unknown = () => grpcError(grpc.status.PERMISSION_DENIED, 'tenantid names no org of this endpoint');
    const server = new grpc.Server();
    server.addService(pubSubService(), {
      Subscribe: (call: grpc.ServerDuplexStream<FetchRequest, FetchResponse>) => {
        const bus = route(call.metadata);
        if (bus) bus.subscribe(call);
        else call.emit('error', unknown());
      },
      GetSchema: (
        call: grpc.ServerUnaryCall<SchemaRequest, SchemaInfo>,
        callback: grpc.sendUnaryData<SchemaInfo>,
      ) => {
        const bus = route(call.metadata);
        if (bus) bus.getSchema(call, callback);
        else callback(unknown());
      },
      GetTopic: (
        call: grpc.ServerUnaryCall<{ topic_name: string }, unknown>,
        callback: grpc.sendUnaryData<unknown>,
      ) => {
        const bus = route(call.metadata);
        if (bus) bus.getTopic(call, callback);
        else callback(unknown());
      },
    });
    const bound = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`${host}:${port}`, grpc.ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    );
    return {
      endpoint: `${host}:${bound}`,
      add: (bus) => {
        if (buses.has(bus.org.orgId)) return;
        buses.set(bus.org.orgId, bus);
        bus.attach();
      },
      close: async () => {
        for (const bus of buses.values()) bus.detach();
        server.forceShutdown();
      },
    };
  }

  /** Served by one more endpoint: idle streams get keepalives from now on. */
  private attach(): void {
    this.serving++;
    this.keepalive ??= setInterval(() => this.sendKeepalives(), Math.min(this.keepaliveMs, 60_000));
    this.keepalive.unref();
  }

  /** One endpoint fewer; the last one gone ends every stream. */
  private detach(): void {
    this.serving = Math.max(0, this.serving - 1);
    if (this.serving > 0) return;
    if (this.keepalive) clearInterval(this.keepalive);
    this.keepalive = null;
    for (const s of [...this.subscriptions]) this.fail(s, grpcError(grpc.status.UNAVAILABLE, 'closing'));
  }

  get listening(): boolean {
    return this.serving > 0;
  }

  /** Subscriptions that have asked for events (their first FetchRequest came): the streams open on the bus. */
  openStreams(): number {
    let open = 0;
    for (const s of this.subscriptions) if (s.next !== null) open++;
    return open;
  }

  // ---- the bus ----

  private schemaNow(): AccountEventSchema {
    const schema = new AccountEventSchema(this.org.customFields.values());
    const known = this.schemas.get(schema.id);
    if (known) return known;
    this.schemas.set(schema.id, schema);
    return schema;
  }

  private onAccountChange(change: LocalAccountChange): void {
    if (!this.selection.accountSelected) return;
    const account = change.changeType === 'DELETE' ? null : (this.org.getAccount(change.ids[0]!) ?? null);
    this.append(change.changeType, change.ids, change.changed, change.userId, change.origin, account);
  }

  private append(
    changeType: LocalChangeType,
    ids: string[],
    changed: string[],
    userId: string,
    origin: string,
    account: StoredAccount | null | undefined,
  ): void {
    const schema = this.schemaNow();
    const at = this.org.now();
    const replay = ++this.lastReplay;
    const payload = schema.encode({
      changeType,
      ids,
      changed,
      userId,
      origin,
      at,
      commitNumber: Number(replay),
      account: account ?? null,
      ...(changeType === 'UPDATE' ? { only: changed } : {}),
    });
    this.events.push({ replay, at, schemaId: schema.id, payload, id: randomUUID() });
    this.expire();
    for (const s of this.subscriptions) this.pump(s);
  }

  private expire(): void {
    const horizon = this.org.now() - this.retentionMs;
    while (this.events.length > 0 && this.events[0]!.at < horizon) {
      this.purgedThrough = this.events.shift()!.replay;
    }
  }

  // ---- RPCs ----

  /** Salesforce's auth headers: a session of the org's and its id. */
  private authFailure(metadata: grpc.Metadata): Partial<grpc.StatusObject> | null {
    const token = metadata.get('accesstoken')[0];
    const tenant = metadata.get('tenantid')[0];
    if (typeof token !== 'string' || this.org.sessionUser(token) === null)
      return grpcError(
        grpc.status.UNAUTHENTICATED,
        'invalid or expired session',
        'sfdc.platform.eventbus.grpc.service.auth.error',
      );
    if (tenant !== this.org.orgId)
      return grpcError(grpc.status.PERMISSION_DENIED, 'tenantid is not the org of the session');
    return null;
  }

  private subscribe(call: grpc.ServerDuplexStream<FetchRequest, FetchResponse>): void {
    this.counters.subscribes++;
    const refused = this.authFailure(call.metadata);
    if (refused) {
      // grpc-js ends a server stream with the status of an `error` it emits.
      call.emit('error', refused);
      return;
    }
    const s: Subscription = { call, next: null, pending: 0 };
    this.subscriptions.add(s);
    call.on('data', (request: FetchRequest) => this.onFetch(s, request));
    call.on('end', () => {
      this.subscriptions.delete(s);
      call.end();
    });
    call.on('cancelled', () => this.subscriptions.delete(s));
  }

  private onFetch(s: Subscription, request: FetchRequest): void {
    this.counters.fetchRequests++;
    if (s.next === null) {
      if (!this.available || (request.topic_name && request.topic_name !== ACCOUNT_CHANGE_TOPIC)) {
        this.fail(s, grpcError(grpc.status.NOT_FOUND, `topic ${request.topic_name} is not available`));
        return;
      }
      const start = this.startAfter(request);
      if (start === null) {
        this.fail(
          s,
          grpcError(grpc.status.INVALID_ARGUMENT, 'the replay id is not valid', REPLAY_ID_CORRUPTED),
        );
        return;
      }
      s.next = start;
    }
    s.pending += Math.max(0, Math.min(request.num_requested, MAX_NUM_REQUESTED));
    this.pump(s);
  }

  /** The first replay the subscription delivers, or null for a replay id the bus cannot start after. */
  private startAfter(request: FetchRequest): bigint | null {
    if (request.replay_preset === 'EARLIEST') return this.purgedThrough + 1n;
    if (request.replay_preset !== 'CUSTOM') return this.lastReplay + 1n;
    const id = request.replay_id;
    if (id?.length !== 8) return null;
    const replay = id.readBigUInt64BE();
    if (replay < this.purgedThrough || replay > this.lastReplay) return null;
    return replay + 1n;
  }

  private pump(s: Subscription): void {
    if (s.next === null || s.pending <= 0) return;
    const from = this.events.findIndex((e) => e.replay >= s.next!);
    if (from < 0) return;
    const batch = this.events.slice(from, from + s.pending);
    s.pending -= batch.length;
    s.next = batch[batch.length - 1]!.replay + 1n;
    this.counters.delivered += batch.length;
    s.call.write({
      events: batch.map((e) => ({
        event: { id: e.id, schema_id: e.schemaId, payload: e.payload },
        replay_id: replayBytes(e.replay),
      })),
      latest_replay_id: replayBytes(batch[batch.length - 1]!.replay),
      rpc_id: randomUUID(),
      pending_num_requested: s.pending,
    });
  }

  private sendKeepalives(): void {
    for (const s of this.subscriptions) {
      if (s.next === null) continue;
      s.call.write({
        events: [],
        latest_replay_id: replayBytes(s.next - 1n),
        rpc_id: randomUUID(),
        pending_num_requested: s.pending,
      });
    }
  }

  private fail(s: Subscription, error: Partial<grpc.StatusObject>): void {
    this.subscriptions.delete(s);
    s.call.emit('error', error);
  }

  private getSchema(
    call: grpc.ServerUnaryCall<SchemaRequest, SchemaInfo>,
    callback: grpc.sendUnaryData<SchemaInfo>,
  ): void {
    this.counters.schemaRequests++;
    const refused = this.authFailure(call.metadata);
    if (refused) {
      callback(refused);
      return;
    }
    const schema = this.schemas.get(call.request.schema_id);
    if (!schema) {
      callback(grpcError(grpc.status.NOT_FOUND, `no schema ${call.request.schema_id}`));
      return;
    }
    callback(null, { schema_json: schema.json, schema_id: schema.id, rpc_id: randomUUID() });
  }

  private getTopic(
    call: grpc.ServerUnaryCall<{ topic_name: string }, unknown>,
    callback: grpc.sendUnaryData<unknown>,
  ): void {
    const refused = this.authFailure(call.metadata);
    if (refused) {
      callback(refused);
      return;
    }
    callback(null, {
      topic_name: call.request.topic_name,
      tenant_guid: this.org.orgId,
      can_publish: false,
      can_subscribe: this.available && call.request.topic_name === ACCOUNT_CHANGE_TOPIC,
      schema_id: this.schemaNow().id,
      rpc_id: randomUUID(),
    });
  }
}
