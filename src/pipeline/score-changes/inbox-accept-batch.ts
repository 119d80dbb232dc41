import { chunk } from '../../util/chunk.js';

/**
 * Gathers the acceptances asked for within one turn of the event loop and sends them together: in a storm the
 * server reads many deliveries in one poll phase, and one script call for all of them costs Redis and the
 * client (command object, argument conversion, reply decoding and checking) once instead of once per event.
 * The batch leaves on setImmediate, after the poll phase that read the deliveries, so an event waits for no
 * later one. Each caller gets its own outcome; when a call fails every caller in it gets the error (the route
 * answers 503 and the sender retries, as with one event a call).
 */
export class InboxAcceptBatch<Entry, Outcome> {
  private queued: Waiting<Entry, Outcome>[] = [];

  /** `send` answers one outcome per entry, in order; at most `max` entries go in one call. */
  constructor(
    private readonly send: (entries: Entry[]) => Promise<Outcome[]>,
    private readonly max: number,
  ) {}

  accept(entry: Entry): Promise<Outcome> {
    return new Promise<Outcome>((resolve, reject) => {
      if (this.queued.length === 0) setImmediate(() => this.flush());
      this.queued.push({ entry, resolve, reject });
    });
  }

  private flush(): void {
    const all = this.queued;
    this.queued = [];
    for (const batch of chunk(all, this.max)) {
      this.send(batch.map((w) => w.entry)).then(
        (outcomes) => {
          if (outcomes.length !== batch.length) {
            const err = new BatchReplyLengthError(batch.length, outcomes.length);
            for (const w of batch) w.reject(err);
            return;
          }
          for (const [i, w] of batch.entries()) w.resolve(outcomes[i]!);
        },
        (err: unknown) => {
          for (const w of batch) w.reject(err);
        },
      );
    }
  }
}

interface Waiting<Entry, Outcome> {
  entry: Entry;
  resolve: (outcome: Outcome) => void;
  reject: (err: unknown) => void;
}

export class BatchReplyLengthError extends Error {
  readonly code = 'BATCH_REPLY_LENGTH';
  constructor(
    readonly sent: number,
    readonly answered: number,
  ) {
    super(`a batch of ${sent} acceptances was answered with ${answered} outcomes`);
    this.name = 'BatchReplyLengthError';
  }
}
