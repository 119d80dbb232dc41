import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { TokenManager } from '../auth/token-manager.js';
import type { Config } from '../config.js';
import type { ChangeStreamInput } from '../crm/provider.js';
import { isLetIn } from '../installations/let-in.js';
import type { InstallationStore } from '../installations/store.js';
import type { Logger } from '../log.js';
import type { Pipeline } from '../pipeline/pipeline.js';
import { jobIdPart, type Queues } from '../pipeline/queues.js';
import { providerFor } from '../providers.js';
import type { RedisClient } from '../redis.js';
import type { StreamStateInput } from '../storage/change-stream-states.js';
import type { Keys } from '../storage/keys.js';
import type { LinkIndex } from '../storage/link-index.js';
import { LuaScript } from '../storage/lua-script.js';
import type { AppRuntime } from './runtime.js';
import type { Stores } from './stores.js';

/**
 * The change streams of the installations whose CRM pushes changes over a subscription (a provider's
 * `changeStream`), held by the worker processes: one stream per installation across the fleet. A stream runs
 * where its Redis lease is held (SET NX with a short expiry, renewed while it runs); a process that dies stops
 * renewing, and another takes the lease within about `leaseMs`. A process holds at most `maxStreams`; the
 * others' changes still arrive by the poll, which keeps running as the safety net. The lease is given back on
 * a clean stop, so a restart takes over at once.
 *
 * Leases are renewed and free ones sought every tick (400 ms); the list of streamable installations (every
 * installation's hash, and the poll cursor of each one not held here) is read at most every `refreshMs` (5 s),
 * since a fleet of workers reading every installation 2.5 times a second costs Redis more than the streams
 * do. What that costs: an installation removed, stopped or disconnected ends its stream within that refresh
 * (plus a tick), not within a tick; a new installation joins the list within it too, and its stream then
 * starts a tick after its first poll (only those waiting for it have their cursor read every tick).
 *
 * What each stream reports (streaming, or on the poll and why) is recorded in Redis while its lease is held
 * (storage/change-stream-states.ts), and a released stream records why it ended in the same step that gives
 * the lease back: the admin page, `status` and the poll read it from any process (change-source.ts).
 */

const RENEW = LuaScript.load('lock-renew');
const renewReply = z.enum(['renewed', 'lost']);

export interface ChangeStreamOptions {
  /** How long a lease lasts unless renewed (ms); a dead holder's streams move within about this. */
  leaseMs?: number;
  /** How often leases are renewed and free ones sought (ms). */
  tickMs?: number;
  /** How often the list of streamable installations is read again (ms); the ticks between use the last. */
  refreshMs?: number;
  maxStreams?: number;
}

/** One CRM's change stream, as the provider has it. */
type StreamSource = (input: ChangeStreamInput) => Promise<void>;

interface Held {
  abort: AbortController;
  running: Promise<void>;
}

/** What the streams use of the application context (context.ts builds them from its own). */
export interface StreamContext {
  config: Config;
  installations: InstallationStore;
  redis: RedisClient;
  keys: Keys;
  stores: Pick<Stores, 'provider' | 'streamStates'>;
  logger: Logger;
  tokens: TokenManager;
  pipeline: Pipeline;
  queues: Queues;
  runtime: AppRuntime;
  index: LinkIndex;
}

export class ChangeStreams {
  private readonly token = randomUUID();
  private readonly held = new Map<string, Held>();
  /** Each installation's state writes, in order: a stream's last report lands before its release. */
  private readonly writes = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  private readonly leaseMs: number;
  private readonly tickMs: number;
  private readonly refreshMs: number;
  private readonly maxStreams: number;
  private streamable = new Map<string, StreamSource>();
  /** Streamable once polled: the first poll has not run yet at the last refresh. */
  private awaitingPoll = new Map<string, StreamSource>();
  private refreshedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly ctx: StreamContext,
    options: ChangeStreamOptions = {},
  ) {
    // A killed holder's changes wait for its lease to lapse: 2 s keeps that within the 3 s a change is meant to
    // take, and renewing every 400 ms leaves four renewals' slack before a slow process loses it.
    this.leaseMs = options.leaseMs ?? 2_000;
    this.tickMs = options.tickMs ?? Math.max(200, Math.floor(this.leaseMs / 5));
    this.refreshMs = options.refreshMs ?? 5_000;
    this.maxStreams = options.maxStreams ?? 200;
  }

  start(): void {
    if (this.timer) return;
    // A start reads the installations afresh: the list kept from before a stop may be of long ago.
    this.refreshedAt = Number.NEGATIVE_INFINITY;
    const tick = () => {
      this.ticking ??= this.tick()
        .catch((err) => this.ctx.logger.warn({ err }, 'change streams: lease round failed'))
        .finally(() => {
          this.ticking = null;
        });
    };
    tick();
    this.timer = setInterval(tick, this.tickMs);
  }

  /** The installations whose stream runs in this process. */
  running(): string[] {
    return [...this.held.keys()];
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.ticking;
    await Promise.all(
      [...this.held.keys()].map((id) => this.release(id, 'The worker holding the stream stopped')),
    );
  }

  private async tick(): Promise<void> {
    const streamable = await this.streamableNow();
    // Each lease its own round trip, sent together: a round of 200 takes one round trip's time, not 200 of them,
    // so the 400 ms tick holds with Redis a network hop away.
    const held = [...this.held.keys()];
    const renewed = await Promise.all(
      held.map((id) =>
        RENEW.run(
          this.ctx.redis,
          [this.ctx.keys.changeStreamLease(id)],
          [this.token, this.leaseMs],
          renewReply,
        ),
      ),
    );
    await Promise.all(
      held.map((id, i) => {
        // A lost lease (nothing is recorded then: another may hold it), or an installation stopped, disconnected
        // or removed: its stream ends here.
        if (renewed[i] === 'lost') return this.release(id, 'The stream lost its lease');
        if (!streamable.has(id))
          return this.release(id, 'The installation was stopped, disconnected or removed');
        return undefined;
      }),
    );
    const free = [...streamable].filter(([id]) => !this.held.has(id));
    // Tried in rounds of the room left, each round's SET NX sent together, so a process never takes more than
    // its limit.
    while (free.length > 0 && this.held.size < this.maxStreams) {
      const round = free.splice(0, this.maxStreams - this.held.size);
      const taken = await Promise.all(
        round.map(([id]) =>
          this.ctx.redis.set(this.ctx.keys.changeStreamLease(id), this.token, 'PX', this.leaseMs, 'NX'),
        ),
      );
      round.forEach(([id, run], i) => {
        if (taken[i] === 'OK') this.begin(id, run);
      });
    }
  }

  /**
   * The installations whose stream may run, read again once `refreshMs` has passed since the last read. Those
   * still waiting for their first poll are looked at every tick, so their stream starts a tick after it.
   */
  private async streamableNow(): Promise<Map<string, StreamSource>> {
    if (Date.now() - this.refreshedAt >= this.refreshMs) await this.refresh();
    for (const [id, run] of this.awaitingPoll) {
      if ((await this.ctx.index.pollCursors.get(id)) === null) continue;
      this.awaitingPoll.delete(id);
      this.streamable.set(id, run);
    }
    return this.streamable;
  }

  private async refresh(): Promise<void> {
    const { config, index } = this.ctx;
    const streamable = new Map<string, StreamSource>();
    const awaitingPoll = new Map<string, StreamSource>();
    for (const i of await this.ctx.installations.list()) {
      if (!isLetIn(i) || i.status !== 'connected') continue;
      const source = providerFor(i.crm).changeStream;
      if (!source?.enabled(config)) continue;
      const run: StreamSource = (input) => source.run(config, input);
      // Not before the installation's first poll: until then its backfill is on its way to every record, and a
      // stream would hand it each record created meanwhile (the first poll only sets its cursor).
      const polled = this.held.has(i.id) || (await index.pollCursors.get(i.id)) !== null;
      (polled ? streamable : awaitingPoll).set(i.id, run);
    }
    this.streamable = streamable;
    this.awaitingPoll = awaitingPoll;
    this.refreshedAt = Date.now();
  }

  private begin(installationId: string, run: StreamSource): void {
    const abort = new AbortController();
    const { ctx } = this;
    const running = (async () => {
      const installation = await ctx.installations.get(installationId);
      if (!installation) return;
      const handle = await ctx.runtime.open(installationId, { urgent: true });
      await run({
        installation,
        tokens: ctx.tokens.source(installationId),
        storage: ctx.stores.provider,
        logger: ctx.logger,
        signal: abort.signal,
        deliver: async (changes) => {
          // Before the first poll the backfill is on its way to every record: a creation is its to process, as
          // the poll leaves it (handlers/poll.ts).
          const polled = (await ctx.index.pollCursors.get(installationId)) !== null;
          const kept = polled ? changes : changes.filter((c) => c.kind !== 'created');
          await ctx.pipeline.enqueueCrmChanges(installationId, kept);
        },
        catchUp: (reason) => this.catchUp(installationId, reason),
        survivorsOf: async (ids) => (await handle.connector.survivorsOf?.(ids)) ?? new Map(),
        report: (state) => void this.record(installationId, state),
      });
    })()
      .catch((err) => {
        ctx.logger.warn({ err, installationId }, 'change stream stopped');
        return err instanceof Error ? err.message : String(err);
      })
      .then(async (failure) => {
        // Ended by itself (the installation went away, or failed to open): the lease goes back for a later try.
        if (abort.signal.aborted || this.held.get(installationId)?.abort !== abort) return;
        this.held.delete(installationId);
        await this.giveBack(installationId, failure ? `The stream failed: ${failure}` : 'The stream ended');
      });
    this.held.set(installationId, { abort, running });
    ctx.logger.info({ installationId }, 'change stream started');
  }

  /** The change poll now, once however many ask before it runs: what the stream could not say, it finds. */
  private async catchUp(installationId: string, reason: string): Promise<void> {
    this.ctx.logger.info({ installationId, reason }, 'change stream: catching up by the poll');
    await this.ctx.queues.add(
      'schedule',
      'poll',
      { installationId, reason: 'catch-up' },
      { deduplication: { id: `catchup-${jobIdPart(installationId)}` } },
    );
  }

  /** Ends the stream held here, then gives its lease back with `why` recorded. */
  private async release(installationId: string, why: string): Promise<void> {
    const held = this.held.get(installationId);
    if (!held) return;
    this.held.delete(installationId);
    held.abort.abort();
    await held.running;
    await this.giveBack(installationId, why);
  }

  private async giveBack(installationId: string, why: string): Promise<void> {
    await this.record(installationId, { mode: 'poll', reason: 'ended', detail: why }, true);
  }

  /**
   * Records a state while the lease is this process's (with `release`, giving it back), after the
   * installation's earlier writes. A failed write is logged and the stream goes on: the state is for people
   * and the poll, and an unreleased lease lapses within `leaseMs`.
   */
  private record(installationId: string, state: StreamStateInput, release = false): Promise<void> {
    const { streamStates } = this.ctx.stores;
    const write = (this.writes.get(installationId) ?? Promise.resolve())
      .then(() => streamStates.write(installationId, this.token, state, { release }))
      .then(
        () => undefined,
        (err: unknown) =>
          this.ctx.logger.warn({ err, installationId }, 'change stream: its state was not recorded'),
      );
    this.writes.set(installationId, write);
    void write.then(() => {
      if (this.writes.get(installationId) === write) this.writes.delete(installationId);
    });
    return write;
  }
}
