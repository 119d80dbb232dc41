import { setTimeout as sleep } from 'node:timers/promises';
import { status } from '@grpc/grpc-js';
import type { ChangeStreamInput } from '../../../src/crm/provider.js';
import type { SalesforceSettings } from '../config.js';
import { changesOfEvents, deletedIds } from './cdc-changes.js';
import { type ChangeEvent, EventSchemas } from './pubsub/change-events.js';
import { grpcStatusOf, PubSubClient, type PubSubSession, pubSubErrorCode } from './pubsub/client.js';
import {
  ACCOUNT_CHANGE_TOPIC,
  type FetchResponse,
  MAX_NUM_REQUESTED,
  REPLAY_ID_CORRUPTED,
} from './pubsub/proto.js';
import { ReplayStore } from './replay-store.js';

/**
 * One installation's Change Data Capture subscription on `/data/AccountChangeEvent` over the Pub/Sub API.
 *
 * Flow control: one FetchRequest of `batch` events in flight; the next goes out once Salesforce has delivered
 * them all (`pending_num_requested` 0) and their changes are queued. Each response's changes are queued before
 * its last replay id is stored (ReplayStore), so a killed worker resumes from the last batch it queued and
 * replays at most that one (at least once). A resubscription starts after the stored replay id; none stored (a
 * first start), or one the bus refuses (older than its 72 hours), starts at the tip after a catch-up by the
 * poll. Gap and overflow events ask for the same catch-up. A refused session token is refreshed as REST calls
 * refresh theirs; an org whose Account channel is not available (CDC not selected, edition limits) stays on
 * the poll and is tried again after a while. Other failures reconnect with backoff.
 */

export interface CdcStreamOptions {
  /** Events per FetchRequest (at most 100). */
  batch?: number;
  /** Backoff of reconnections: first and longest wait (ms). */
  backoffMs?: { first: number; max: number };
  /** How long an org without the Account channel waits before the subscription is tried again (ms). */
  unavailableRetryMs?: number;
}

const UNAVAILABLE_RETRY_MS = 600_000;

const clients = new Map<string, PubSubClient>();

/** One channel per endpoint per process: the streams of every installation share it. */
function clientFor(config: SalesforceSettings): PubSubClient {
  const endpoint = config.salesforce.pubSubEndpoint;
  let client = clients.get(endpoint);
  if (!client) {
    const host = endpoint.replace(/:\d+$/, '');
    const local = config.salesforce.allowLocalHosts && ['127.0.0.1', 'localhost'].includes(host);
    client = new PubSubClient(endpoint, { plaintext: local });
    clients.set(endpoint, client);
  }
  return client;
}

/** Thrown inside one stream's run to end it for a reason the loop acts on. */
class StreamEnded extends Error {
  constructor(
    readonly reason: 'replay-refused' | 'unauthenticated' | 'unavailable' | 'failed',
    override readonly cause: unknown,
  ) {
    super(reason);
  }
}

export async function runAccountChangeStream(
  config: SalesforceSettings,
  input: ChangeStreamInput,
  options: CdcStreamOptions = {},
): Promise<void> {
  const stream = new AccountChangeStream(config, input, options);
  await stream.run();
}

class AccountChangeStream {
  private readonly client: PubSubClient;
  private readonly replay: ReplayStore;
  private readonly schemas: EventSchemas;
  private readonly batch: number;
  private session: PubSubSession | null = null;

  constructor(
    private readonly config: SalesforceSettings,
    private readonly input: ChangeStreamInput,
    private readonly options: CdcStreamOptions,
  ) {
    this.client = clientFor(config);
    this.replay = new ReplayStore(input.storage);
    this.schemas = new EventSchemas((id) => this.client.getSchema(this.requireSession(), id));
    this.batch = Math.min(Math.max(options.batch ?? MAX_NUM_REQUESTED, 1), MAX_NUM_REQUESTED);
  }

  private requireSession(): PubSubSession {
    if (!this.session) throw new Error('no Pub/Sub session yet');
    return this.session;
  }

  private get id(): string {
    return this.input.installation.id;
  }

  async run(): Promise<void> {
    const { signal, logger } = this.input;
    const backoff = this.options.backoffMs ?? { first: 500, max: 30_000 };
    let wait = backoff.first;
    let refreshed = false;
    while (!signal.aborted) {
      let delivered = false;
      try {
        delivered = await this.streamOnce();
        if (signal.aborted) return;
        throw new StreamEnded('failed', new Error('the stream ended'));
      } catch (err) {
        if (signal.aborted) return;
        const ended = err instanceof StreamEnded ? err : new StreamEnded('failed', err);
        if (ended.reason === 'replay-refused') {
          logger.warn(
            { installationId: this.id },
            'change stream: replay id refused; catching up by the poll',
          );
          await this.replay.clear(this.id);
          await this.input.catchUp('the stored replay id was refused');
          continue;
        }
        if (ended.reason === 'unauthenticated' && !refreshed && this.session) {
          refreshed = true;
          await this.input.tokens.refreshAfterRejection(this.session.accessToken).catch(() => undefined);
          continue;
        }
        if (ended.reason === 'unavailable') {
          const retryMs = this.options.unavailableRetryMs ?? UNAVAILABLE_RETRY_MS;
          this.input.report({
            mode: 'poll',
            reason: 'unavailable',
            detail: `Change Data Capture is not available in this org (Account is not selected for it, or the edition's limit refuses it; tried again every ${minutes(retryMs)}): ${describe(ended.cause)}`,
          });
          await sleep(retryMs, undefined, { signal }).catch(() => undefined);
          continue;
        }
        logger.warn({ installationId: this.id, err: ended.cause }, 'change stream ended; reconnecting');
        this.input.report({
          mode: 'poll',
          reason: 'reconnecting',
          detail: `The Change Data Capture stream is reconnecting after an error: ${describe(ended.cause)}`,
        });
      }
      if (delivered) {
        wait = backoff.first;
        refreshed = false;
      }
      await sleep(wait, undefined, { signal }).catch(() => undefined);
      wait = Math.min(wait * 2, backoff.max);
    }
  }

  /**
   * One Subscribe call, until it fails or the signal aborts. True when it delivered anything (the backoff
   * starts over).
   */
  private async streamOnce(): Promise<boolean> {
    const { installation, tokens, signal } = this.input;
    const instanceUrl = installation.instanceUrl ?? this.config.salesforce.instanceUrl ?? '';
    this.session = { accessToken: await tokens.current(), instanceUrl, tenantId: installation.externalId };
    const stored = await this.replay.get(this.id);
    const call = this.client.subscribe(this.session);
    const onAbort = () => call.cancel();
    signal.addEventListener('abort', onAbort, { once: true });
    let delivered = false;
    let chain: Promise<void> = Promise.resolve();
    try {
      call.write({
        topic_name: ACCOUNT_CHANGE_TOPIC,
        replay_preset: stored ? 'CUSTOM' : 'LATEST',
        ...(stored ? { replay_id: stored } : {}),
        num_requested: this.batch,
      });
      if (!stored) await this.input.catchUp('the change stream starts at the tip');
      this.input.report({ mode: 'stream', detail: 'Account changes arrive by Change Data Capture' });
      await new Promise<void>((resolve, reject) => {
        call.on('data', (response: FetchResponse) => {
          // One response at a time, in order: its changes queued and its replay id stored before the next.
          chain = chain
            .then(async () => {
              const more = await this.take(response);
              delivered ||= response.events.length > 0;
              if (more) call.write({ num_requested: this.batch });
            })
            .catch((err) => {
              call.cancel();
              reject(new StreamEnded('failed', err));
            });
        });
        call.on('error', (err) => reject(classify(err)));
        call.on('end', () => resolve());
      });
      await chain;
      return delivered;
    } finally {
      signal.removeEventListener('abort', onAbort);
      call.removeAllListeners('data');
      call.on('error', () => undefined);
      call.cancel();
      // A batch being queued finishes (and stores its position) before a new stream reads the position.
      await chain.catch(() => undefined);
    }
  }

  /** Queues one response's changes, then stores its position. True when the next FetchRequest is due. */
  private async take(response: FetchResponse): Promise<boolean> {
    if (response.events.length === 0) {
      // An idle stream's keepalive: the position moves on, so a quiet org's stored id never ages out.
      if (response.latest_replay_id?.length) await this.replay.set(this.id, response.latest_replay_id);
      return response.pending_num_requested === 0;
    }
    const events: ChangeEvent[] = [];
    for (const e of response.events)
      events.push(await this.schemas.decode(e.event.schema_id, e.event.payload));
    const deleted = deletedIds(events);
    const survivors = deleted.length > 0 ? await this.input.survivorsOf(deleted) : new Map<string, string>();
    const { changes, catchUp } = changesOfEvents(events, survivors);
    if (changes.length > 0) await this.input.deliver(changes);
    if (catchUp) await this.input.catchUp(catchUp);
    await this.replay.set(this.id, response.events[response.events.length - 1]!.replay_id);
    return response.pending_num_requested === 0;
  }
}

function classify(err: unknown): StreamEnded {
  const code = grpcStatusOf(err);
  if (pubSubErrorCode(err) === REPLAY_ID_CORRUPTED) return new StreamEnded('replay-refused', err);
  if (code === status.UNAUTHENTICATED) return new StreamEnded('unauthenticated', err);
  if (code === status.NOT_FOUND || code === status.PERMISSION_DENIED)
    return new StreamEnded('unavailable', err);
  return new StreamEnded('failed', err);
}

function minutes(ms: number): string {
  const m = Math.round(ms / 60_000);
  return m >= 1 ? `${m} minute${m === 1 ? '' : 's'}` : `${Math.round(ms / 1000)} s`;
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
