import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import {
  DEFAULT_WEBHOOK_RETRY_DELAYS_MS,
  WEBHOOK_ATTEMPT_TIMEOUT_MS,
  WEBHOOK_HEADERS,
} from './sandbox-facts.js';
import { signStandardWebhook, webhookSigningKey } from './webhook-signing.js';

export interface SandboxEvent {
  id: string;
  type: string;
  created_at: string;
  data: { slug?: string; [field: string]: unknown };
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'abandoned';

export interface Delivery {
  id: string;
  type: string;
  url: string;
  status: DeliveryStatus;
  attempts: number;
  /** HTTP status of the last attempt, when one answered. */
  lastStatus?: number;
  /** Why the last attempt failed, when it did. */
  lastError?: string;
}

export interface EventDispatcherOptions {
  webhookUrl?: string;
  webhookSecret?: string;
  /** Pauses before each retry; its length is the number of retries. */
  retryDelaysMs?: number[];
  logger?: Pick<Logger, 'warn'>;
}

/**
 * Emits events and delivers them, signed, to the webhook URL. Delivery runs in the background and never
 * throws into the sandbox: its outcome is recorded in `deliveries` (and a final failure is logged).
 */
export class EventDispatcher {
  private url: string | undefined;
  private key: Buffer | undefined;
  private readonly retryDelaysMs: number[];
  private readonly emitted: SandboxEvent[] = [];
  private readonly records: Delivery[] = [];
  private readonly running = new Set<Promise<void>>();
  private readonly stop = new AbortController();

  constructor(private readonly options: EventDispatcherOptions = {}) {
    this.retryDelaysMs = options.retryDelaysMs ?? DEFAULT_WEBHOOK_RETRY_DELAYS_MS;
    this.configure(options.webhookUrl, options.webhookSecret);
  }

  /** Where events go from now on; with no URL they are only recorded. */
  configure(webhookUrl: string | undefined, webhookSecret: string | undefined): void {
    this.url = webhookUrl;
    this.key = webhookSecret === undefined ? undefined : webhookSigningKey(webhookSecret);
  }

  get events(): SandboxEvent[] {
    return structuredClone(this.emitted);
  }

  get deliveries(): Delivery[] {
    return this.records.map((d) => ({ ...d }));
  }

  emit(type: string, data: SandboxEvent['data']): SandboxEvent {
    const event: SandboxEvent = {
      id: `evt_${randomBytes(12).toString('hex')}`,
      type,
      created_at: new Date().toISOString(),
      data: structuredClone(data),
    };
    this.emitted.push(event);
    if (this.url && !this.stop.signal.aborted) {
      const record: Delivery = { id: event.id, type, url: this.url, status: 'pending', attempts: 0 };
      this.records.push(record);
      const run = this.deliver(event, record).finally(() => this.running.delete(run));
      this.running.add(run);
    }
    return structuredClone(event);
  }

  /** Resolves when no delivery is pending (retries included). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }

  /** Stops retries and aborts attempts in flight; their deliveries end as `abandoned`. */
  async close(): Promise<void> {
    this.stop.abort();
    await this.idle();
  }

  private async deliver(event: SandboxEvent, record: Delivery): Promise<void> {
    const body = JSON.stringify(event);
    const url = record.url;
    const key = this.key;
    for (let attempt = 0; attempt <= this.retryDelaysMs.length; attempt += 1) {
      if (attempt > 0) {
        try {
          await sleep(this.retryDelaysMs[attempt - 1], undefined, { signal: this.stop.signal });
        } catch {
          // Only an abort rejects this sleep: the sandbox is closing.
          record.status = 'abandoned';
          return;
        }
      }
      record.attempts += 1;
      try {
        const timestamp = Math.floor(Date.now() / 1000);
        const headers: Record<string, string> = {
          'content-type': 'application/json',
          [WEBHOOK_HEADERS.id]: event.id,
          [WEBHOOK_HEADERS.timestamp]: String(timestamp),
        };
        if (key) headers[WEBHOOK_HEADERS.signature] = signStandardWebhook(key, event.id, timestamp, body);
        const response = await fetch(url, {
          method: 'POST',
          headers,
          body,
          signal: AbortSignal.any([this.stop.signal, AbortSignal.timeout(WEBHOOK_ATTEMPT_TIMEOUT_MS)]),
        });
        // The receiver's answer body is not used; read it so the connection can be reused.
        await response.arrayBuffer().catch(() => undefined);
        record.lastStatus = response.status;
        if (response.ok) {
          record.status = 'delivered';
          delete record.lastError;
          return;
        }
        record.lastError = `HTTP ${response.status}`;
      } catch (err) {
        record.lastError = err instanceof Error ? err.message : String(err);
        if (this.stop.signal.aborted) {
          record.status = 'abandoned';
          return;
        }
      }
    }
    record.status = 'failed';
    this.options.logger?.warn(
      { event_id: event.id, type: event.type, attempts: record.attempts, error: record.lastError },
      'sandbox webhook delivery failed after every retry',
    );
  }
}
