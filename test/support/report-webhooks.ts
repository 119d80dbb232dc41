import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LocalSystem } from '../../local/system.js';
import { signStandardWebhook, webhookSigningKey } from '../../src/sandbox/webhook-signing.js';

/**
 * A report-service webhook sender for tests: Standard Webhooks signatures, and the retry a real sender does
 * until it gets a 2xx (same `webhook-id`, fresh timestamp on every attempt).
 */

export interface ReportEventBody {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
}

export interface SignOptions {
  /** `webhook-id`; defaults to the event's id. */
  id?: string;
  /** Unix seconds; defaults to now. */
  timestamp?: number;
  contentType?: string;
}

export function signedHeaders(
  secret: string,
  body: string,
  id: string,
  timestamp = Math.floor(Date.now() / 1000),
): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signStandardWebhook(webhookSigningKey(secret), id, timestamp, body),
  };
}

export async function postSignedEvent(
  url: string,
  secret: string,
  body: string,
  options: SignOptions & { id: string },
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': options.contentType ?? 'application/json',
      ...signedHeaders(secret, body, options.id, options.timestamp),
    },
    body,
  });
}

export interface DeliveryLog {
  id: string;
  /** Status of each attempt; 0 when the connection failed. */
  statuses: number[];
  acknowledgedAt: number | null;
}

/** Sends until a 2xx, every `retryEveryMs`, for at most `timeoutMs`; returns every attempt's status. */
export async function deliverUntilAcknowledged(
  url: string,
  secret: string,
  event: ReportEventBody,
  options: { retryEveryMs?: number; timeoutMs?: number } = {},
): Promise<DeliveryLog> {
  const body = JSON.stringify(event);
  const log: DeliveryLog = { id: event.id, statuses: [], acknowledgedAt: null };
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  while (Date.now() < deadline) {
    let status = 0;
    try {
      const res = await postSignedEvent(url, secret, body, { id: event.id });
      await res.arrayBuffer();
      status = res.status;
    } catch {
      status = 0;
    }
    log.statuses.push(status);
    if (status >= 200 && status < 300) {
      log.acknowledgedAt = Date.now();
      return log;
    }
    await sleep(options.retryEveryMs ?? 250);
  }
  return log;
}

export function scoreChangedEvent(
  id: string,
  slug: string,
  extra: Record<string, unknown> = {},
): ReportEventBody {
  return { id, type: 'score.changed', created_at: new Date().toISOString(), data: { slug, ...extra } };
}

/**
 * A signed `score.changed` for `slug`, posted to a local system's report webhook as the service sends it (its
 * first secret, a fresh id); the caller checks the answer.
 */
export async function postScoreChanged(
  system: Pick<LocalSystem, 'appUrl' | 'ctx'>,
  slug: string,
): Promise<Response> {
  const id = `msg_${randomUUID()}`;
  const body = JSON.stringify(scoreChangedEvent(id, slug));
  const secret = system.ctx.config.reports.webhookSecrets[0]!;
  return postSignedEvent(`${system.appUrl}/webhooks/reports`, secret, body, { id });
}

/** A `score.changed` as the score-change inbox keeps it once accepted. */
export function inboxEntry(id: string, slug: string) {
  return {
    id,
    source: 'reports' as const,
    type: 'score.changed',
    slug,
    receivedAt: new Date().toISOString(),
    outcome: 'queued',
  };
}
