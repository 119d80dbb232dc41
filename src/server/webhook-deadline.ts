import type { Logger } from 'pino';
import { TimedOutError, within } from '../redis-availability.js';
import {
  type ReportWebhookDeps,
  ReportWebhookHandler,
  type WebhookAnswer,
  type WebhookDelivery,
} from '../webhooks/report-route.js';

/**
 * The deadline of the inbound webhook routes. A sender gives up after a few seconds (5 s for some CRMs) and sends
 * again; a request held longer only piles up sockets. So a webhook answers within WEBHOOK_DEADLINE_MS
 * whatever Redis does: 503 with Retry-After when its work is not done by then, and the sender retries.
 *
 * The work is not cancelled: commands already sent may still run when Redis answers again. Every step is
 * idempotent by the event's id (the duplicate mark, the score-change inbox's script, `evt-<id>` job ids, the
 * CRM event marks and the coalesced change jobs), so the retry of an event whose work went through late is
 * acknowledged as a duplicate, and one whose work did not is done then: each event is applied once.
 */

/** Leaves room within the 2 s an answer must take, for reading the body and writing the answer. */
export const WEBHOOK_DEADLINE_MS = 1_500;

export const WEBHOOK_TIMED_OUT_ANSWER: WebhookAnswer = {
  status: 503,
  outcome: 'unavailable',
  body: { error: 'temporarily unable to record the event; retry', code: 'REDIS_UNAVAILABLE' },
};

/** The report-service route's handler, answering 503 at the deadline (both the direct path and Express). */
export class DeadlineReportWebhookHandler extends ReportWebhookHandler {
  constructor(
    deps: ReportWebhookDeps,
    private readonly deadlineMs: number = WEBHOOK_DEADLINE_MS,
    private readonly log: Logger = deps.logger,
  ) {
    super(deps);
  }

  override async handle(delivery: WebhookDelivery): Promise<WebhookAnswer> {
    try {
      return await within(super.handle(delivery), this.deadlineMs, 'Redis');
    } catch (err) {
      if (!(err instanceof TimedOutError)) throw err;
      this.log.warn({ ip: delivery.ip, deadlineMs: this.deadlineMs }, 'report webhook timed out on Redis');
      return WEBHOOK_TIMED_OUT_ANSWER;
    }
  }
}
