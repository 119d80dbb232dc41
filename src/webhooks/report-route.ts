import type { IncomingHttpHeaders } from 'node:http';
import express, { type NextFunction, type Request, type Response, Router } from 'express';
import type { Logger } from 'pino';
import { z } from 'zod';
import { ALERT_EVENT, type Alert, alertFromEvent } from '../alerts/alert-event.js';
import type { Metrics } from '../metrics.js';
import { ACTIONABLE_REPORT_EVENTS, type VerifiedReportEvent } from '../pipeline/jobs.js';
import type { AcceptOutcome, ScoreChangeInbox } from '../pipeline/score-changes/inbox.js';
import { slugProblem } from '../reports/slug.js';
import type { EventLog } from '../storage/event-log.js';
import { verifyHex, verifyStandard, WebhookSignatureError } from './report-signature.js';

/**
 * `POST /webhooks/reports`: verify on the raw body, parse, deduplicate, record, enqueue, answer. A 2xx means
 * the event is durably queued; when Redis cannot take it the answer is 503 so the sender retries, and the
 * duplicate marker is written only after the enqueue, so that retry is processed rather than dropped.
 */

export const MAX_WEBHOOK_BYTES = 1024 * 1024;

/** How far a `hex` payload's created_at may be from now, either way: the same as the standard scheme's. */
export const HEX_TOLERANCE_MS = 5 * 60 * 1000;

/** Milliseconds since `createdAt` (negative: in the future); absent or unreadable says so. */
function payloadAge(createdAt: unknown, now: number): number | 'absent' | 'unreadable' {
  if (createdAt === undefined) return 'absent';
  if (typeof createdAt !== 'string') return 'unreadable';
  const at = Date.parse(createdAt);
  return Number.isFinite(at) ? now - at : 'unreadable';
}

export const reportEventSchema = z.looseObject({
  id: z.string().min(1).max(256).optional(),
  type: z.string().min(1).max(128),
  created_at: z.string().optional(),
  data: z.looseObject({ slug: z.string().min(1).max(512).optional() }).optional(),
});
export type ReportEvent = z.infer<typeof reportEventSchema>;

/**
 * `alert.fired` is a trigger whose payload may be anything: its envelope is read leniently so that no body
 * of that type is refused for what `data` holds (alert-event.ts reads what it can).
 */
const alertEnvelopeSchema = z.looseObject({
  id: z.string().min(1).max(256).optional().catch(undefined),
  type: z.literal(ALERT_EVENT),
  created_at: z.unknown().optional(),
  data: z.unknown().optional(),
});

function isAlertBody(body: unknown): boolean {
  return typeof body === 'object' && body !== null && (body as { type?: unknown }).type === ALERT_EVENT;
}

function submissionIdOf(data: Record<string, unknown> | undefined): string | undefined {
  const value = data?.submission_id ?? data?.submissionId;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return typeof value === 'string' && value.length > 0 && value.length <= 256 ? value : undefined;
}

export interface ReportWebhookDeps {
  events: EventLog;
  scheme: 'standard' | 'hex';
  secrets: string[];
  hexHeader: string;
  /** Pipeline.enqueueReportEvent, which queues the `report-event` job (pipeline/jobs.ts), for every other kind. */
  enqueue: (event: VerifiedReportEvent) => Promise<void>;
  /**
   * The score-change inbox: a `score.changed` recorded (duplicate marker, event log) and its slug marked in one
   * round trip; `duplicate` when its id was seen before, `marked_kick` when no fan-out is queued yet.
   */
  inbox: Pick<ScoreChangeInbox, 'accept' | 'kickNotQueued'>;
  /** score-changes/updates.ts#kickScoreChanges: queues the inbox's fan-out (the `score-changes` job). */
  kickScoreChanges: () => Promise<void>;
  logger: Logger;
  metrics?: Metrics;
}

export type Outcome =
  | 'accepted'
  | 'duplicate'
  | 'ignored'
  | SignatureOutcome
  | 'malformed'
  | 'too_large'
  | 'unavailable'
  | 'wrong_content_type';
type SignatureOutcome = `signature_${string}`;

/** What to answer a delivery: its status, JSON body and the outcome counted in the metrics. */
export interface WebhookAnswer {
  status: number;
  body: Record<string, unknown>;
  outcome: Outcome;
}

/** A delivery as read off the wire, whatever server read it. */
export interface WebhookDelivery {
  raw: Buffer;
  headers: IncomingHttpHeaders;
  /** The sender's address as the server believes it (TRUST_PROXY), for the refusal log. */
  ip: string | undefined;
}

/**
 * The route's work without its HTTP framework: the Express route below and the server's direct path for this
 * route (server/webhook-fast-path.ts) both hand it the raw body and headers and send what it answers.
 */
export class ReportWebhookHandler {
  constructor(private readonly deps: ReportWebhookDeps) {}

  /** Counts an answer that has left, with the time since the request arrived. */
  observe(started: bigint, outcome: Outcome): void {
    this.deps.metrics?.webhookEvents.inc({ source: 'reports', outcome });
    this.deps.metrics?.webhookAckSeconds.observe(
      { source: 'reports' },
      Number(process.hrtime.bigint() - started) / 1e9,
    );
  }

  /** An unreadable body (body-parser's 4xx): 413 when over the limit, else 400-range as given. */
  unreadable(status: number): WebhookAnswer {
    return status === 413
      ? { status, outcome: 'too_large', body: { error: 'event body over 1 MB' } }
      : { status, outcome: 'malformed', body: { error: 'unreadable body' } };
  }

  async handle({ raw, headers, ip }: WebhookDelivery): Promise<WebhookAnswer> {
    const { deps } = this;
    let eventId: string | undefined;
    try {
      if (deps.scheme === 'standard') eventId = verifyStandard(deps.secrets, headers, raw).id;
      else verifyHex(deps.secrets, headers, deps.hexHeader, raw);
    } catch (err) {
      if (!(err instanceof WebhookSignatureError)) throw err;
      return signatureRefused(deps, err, raw, ip);
    }
    const read = readEvent(deps, raw, headers, ip);
    if ('refused' in read) return read.refused;
    const { event, alert, receivedAt } = read;
    const target = eventTarget(eventId ?? event.id, event, alert);
    if ('refused' in target) return target.refused;
    const { id, slug, actionable } = target;

    const receivedAtIso = receivedAt.toISOString();
    // The common case of a storm: one round trip from verified event to acknowledgement.
    if (actionable === 'score.changed' && slug && !alert) {
      let accepted: AcceptOutcome;
      try {
        accepted = await deps.inbox.accept({
          id,
          source: 'reports',
          type: event.type,
          slug,
          receivedAt: receivedAtIso,
          outcome: 'queued',
        });
      } catch (err) {
        return unavailable(deps, id, err);
      }
      if (accepted === 'duplicate') return answer('duplicate', 200, { received: true, duplicate: true });
      if (accepted === 'marked_kick') {
        // The mark is durable once accepted: a fan-out not queued now is queued by the next event's kick or
        // the periodic sweep (Schedules.scheduleScoreChangeSweep), whichever comes first.
        await deps.kickScoreChanges().catch(async (err: unknown) => {
          deps.logger.warn({ err }, 'score-change fan-out not queued; the next event or the sweep will');
          await deps.inbox.kickNotQueued().catch(() => undefined);
        });
      }
      return answer('accepted', 202, { received: true });
    }
    return recordEvent(deps, event, alert, target, receivedAtIso);
  }
}

/** A delivery refused before it was acted on, with the answer it gets. */
type Refused = { refused: WebhookAnswer };

type ActionableType = (typeof ACTIONABLE_REPORT_EVENTS)[number];

function answer(outcome: Outcome, status: number, body: Record<string, unknown>): WebhookAnswer {
  return { outcome, status, body };
}

function signatureRefused(
  deps: ReportWebhookDeps,
  err: WebhookSignatureError,
  raw: Buffer,
  ip: string | undefined,
): WebhookAnswer {
  deps.logger.warn({ reason: err.reason, bytes: raw.length, ip }, 'report webhook refused');
  return answer(`signature_${err.reason}`, err.reason === 'not_configured' ? 503 : 401, {
    error:
      err.reason === 'not_configured' ? 'webhooks are not configured on this connector' : 'invalid signature',
    reason: err.reason,
  });
}

function unavailable(deps: ReportWebhookDeps, eventId: string, err: unknown): WebhookAnswer {
  deps.logger.error({ err, eventId }, 'report webhook could not be recorded');
  return answer('unavailable', 503, { error: 'temporarily unable to record the event; retry' });
}

/**
 * The event a signed delivery holds (an alert's read from its lenient envelope), with the time it was received;
 * with the hex scheme, only while its created_at is within HEX_TOLERANCE_MS of that time.
 */
function readEvent(
  deps: ReportWebhookDeps,
  raw: Buffer,
  headers: IncomingHttpHeaders,
  ip: string | undefined,
): { event: ReportEvent; alert: Alert | null; receivedAt: Date } | Refused {
  const contentType = headers['content-type'];
  if (contentType !== undefined && !/^application\/([\w.+-]+\+)?json\b/i.test(contentType)) {
    return { refused: answer('wrong_content_type', 415, { error: 'content type must be application/json' }) };
  }
  let event: ReportEvent;
  let alert: Alert | null = null;
  let createdAt: unknown;
  const receivedAt = new Date();
  try {
    const body: unknown = JSON.parse(raw.toString('utf8'));
    createdAt =
      typeof body === 'object' && body !== null ? (body as { created_at?: unknown }).created_at : undefined;
    // Only a body that says it is an alert is read as one: a failed parse costs more than the check.
    const asAlert = isAlertBody(body) ? alertEnvelopeSchema.safeParse(body) : null;
    if (asAlert?.success) {
      alert = alertFromEvent(asAlert.data, receivedAt);
      event = {
        id: asAlert.data.id,
        type: ALERT_EVENT,
        ...(alert.slug ? { data: { slug: alert.slug } } : {}),
      };
    } else {
      const parsed = reportEventSchema.safeParse(body);
      if (!parsed.success) throw new Error(parsed.error.issues[0]?.message ?? 'invalid event');
      event = parsed.data;
    }
  } catch (err) {
    deps.logger.warn({ bytes: raw.length, problem: (err as Error).message }, 'report webhook malformed');
    return { refused: answer('malformed', 400, { error: 'malformed event body' }) };
  }
  const stale = deps.scheme === 'hex' ? hexTimestampRefused(deps, createdAt, receivedAt, ip) : null;
  if (stale) return { refused: stale };
  return { event, alert, receivedAt };
}

/**
 * The hex signature covers no timestamp of its own: the payload's created_at, read from the body as sent
 * (every event type, an alert's rebuilt envelope included), stands in for one. Without it a captured delivery
 * could be replayed at will, so it is required.
 */
function hexTimestampRefused(
  deps: ReportWebhookDeps,
  createdAt: unknown,
  receivedAt: Date,
  ip: string | undefined,
): WebhookAnswer | null {
  const age = payloadAge(createdAt, receivedAt.getTime());
  if (age === 'unreadable') return answer('malformed', 400, { error: 'created_at is not a timestamp' });
  if (age === 'absent') {
    deps.logger.warn({ reason: 'timestamp_missing', ip }, 'report webhook refused');
    return answer('signature_timestamp_missing', 401, {
      error: 'created_at is required with the hex scheme',
      reason: 'timestamp_missing',
    });
  }
  if (Math.abs(age) > HEX_TOLERANCE_MS) {
    const reason = age > 0 ? 'timestamp_too_old' : 'timestamp_too_new';
    deps.logger.warn({ reason, ip }, 'report webhook refused');
    return answer(`signature_${reason}`, 401, { error: 'stale or future event', reason });
  }
  return null;
}

/** What an event is about: its id, its report's slug, and whether its kind makes the connector do work. */
interface EventTarget {
  id: string;
  slug: string | undefined;
  actionable: ActionableType | undefined;
}

function eventTarget(id: string | undefined, event: ReportEvent, alert: Alert | null): EventTarget | Refused {
  let slug = event.data?.slug;
  // An alert names its report loosely: an unusable slug is treated as none. An alert without one names no
  // record: acknowledged and recorded, never refused (a refusal would have the sender retry something no
  // retry can fix).
  if (slug !== undefined && slugProblem(slug) !== null) {
    if (!alert)
      return { refused: answer('malformed', 400, { error: 'data.slug is not a valid report slug' }) };
    slug = undefined;
  }
  const actionable = alert && !slug ? undefined : ACTIONABLE_REPORT_EVENTS.find((t) => t === event.type);
  if (!id) return { refused: answer('malformed', 400, { error: 'event has no id' }) };
  if (actionable && !slug) {
    return { refused: answer('malformed', 400, { error: `${event.type} event has no data.slug` }) };
  }
  return { id, slug, actionable };
}

/**
 * Every event but an inbox's `score.changed`: dropped when seen before, else enqueued when actionable, and
 * recorded in the event log either way.
 */
async function recordEvent(
  deps: ReportWebhookDeps,
  event: ReportEvent,
  alert: Alert | null,
  { id, slug, actionable }: EventTarget,
  receivedAtIso: string,
): Promise<WebhookAnswer> {
  try {
    if (await deps.events.wasReceived('reports', id))
      return answer('duplicate', 200, { received: true, duplicate: true });
    if (actionable && slug) {
      const submissionId = submissionIdOf(event.data);
      await deps.enqueue({
        id,
        type: actionable,
        slug,
        ...(submissionId && actionable === 'report.completed' ? { submissionId } : {}),
        ...(alert
          ? { alert: { line: alert.line, at: alert.at, ...(alert.text ? { text: alert.text } : {}) } }
          : {}),
      });
    }
    await deps.events.record({
      id,
      source: 'reports',
      type: event.type,
      slug: slug ?? null,
      receivedAt: receivedAtIso,
      outcome: actionable ? 'queued' : 'recorded',
      ...(alert
        ? { detail: slug ? alert.line : `no usable data.slug, nothing to update: ${alert.line}` }
        : {}),
    });
  } catch (err) {
    return unavailable(deps, id, err);
  }
  return answer(actionable ? 'accepted' : 'ignored', 202, { received: true });
}

/**
 * The route in Express, for every delivery the server's direct path leaves to it (a compressed body, a path
 * written differently) and for tests that mount the router alone.
 */
export function createReportWebhookRouter(deps: ReportWebhookDeps | ReportWebhookHandler): Router {
  const handler = deps instanceof ReportWebhookHandler ? deps : new ReportWebhookHandler(deps);
  const router = Router();
  const send = (res: Response, started: bigint, answer: WebhookAnswer) => {
    handler.observe(started, answer.outcome);
    res.status(answer.status).json(answer.body);
  };

  router.post(
    '/webhooks/reports',
    (req: Request, _res: Response, next: NextFunction) => {
      markStart(req);
      next();
    },
    express.raw({ type: () => true, limit: MAX_WEBHOOK_BYTES }),
    async (req: Request, res: Response) => {
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      send(res, startOf(req), await handler.handle({ raw, headers: req.headers, ip: req.ip }));
    },
  );

  // Body-parser errors (too large, aborted) for this route only.
  router.use('/webhooks/reports', (err: unknown, req: Request, res: Response, next: NextFunction) => {
    const status = (err as { status?: number }).status;
    if (status && status >= 400 && status < 500) return send(res, startOf(req), handler.unreadable(status));
    next(err);
  });
  return router;
}

const START = Symbol('webhookStart');
type Timed = Request & { [START]?: bigint };
function markStart(req: Request): void {
  (req as Timed)[START] = process.hrtime.bigint();
}
function startOf(req: Request): bigint {
  return (req as Timed)[START] ?? process.hrtime.bigint();
}
