import { IncomingMessage, type OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import type { Logger } from 'pino';
import { REDIS_UNAVAILABLE_CODE, REDIS_UNAVAILABLE_MESSAGE } from '../redis-availability.js';
import {
  MAX_WEBHOOK_BYTES,
  type ReportWebhookHandler,
  type WebhookAnswer,
} from '../webhooks/report-route.js';
import { type AddressWindow, countAnswer, refusalWait } from './address-limits.js';

/**
 * `POST /webhooks/reports` straight off node:http, around Express. In a storm this one route carries nearly
 * every request, and Express's stack (routing through every middleware, body-parser's content negotiation)
 * costs more than the route's own work: through it the acknowledgement rate is half a bare server's. What the
 * stack does for this route is done here too: the same security headers, the same per-address refusal limit
 * (its window and its rule, `refusalWait` and `countAnswer`, are the Express path's own), the same 1 MB limit
 * and error answers. Anything unusual (a compressed body, another spelling of the path) is left to the Express
 * route, which does the same work by the same handler.
 */

export const REPORT_WEBHOOK_PATH = '/webhooks/reports';

export interface WebhookFastPathDeps {
  handler: ReportWebhookHandler;
  /** The window of refused deliveries per address, the one the Express `/webhooks` limiter counts in. */
  refusals: AddressWindow;
  /** The sender's address as Express would see it (TRUST_PROXY). */
  addressOf: (req: IncomingMessage) => string;
  /** The security headers every answer of the server carries (the same for every request: see app.ts). */
  securityHeaders: Readonly<OutgoingHttpHeaders>;
  logger: Logger;
  /** Is this error Redis being away (answered 503 with Retry-After, as the server's error handler does)? */
  redisUnavailable?: (err: unknown) => boolean;
}

/** Whether the direct path takes this request; false leaves it to Express. */
export function takesRequest(req: IncomingMessage): boolean {
  if (req.method !== 'POST') return false;
  const url = req.url ?? '';
  const path = url.indexOf('?') >= 0 ? url.slice(0, url.indexOf('?')) : url;
  if (path !== REPORT_WEBHOOK_PATH) return false;
  const encoding = req.headers['content-encoding'];
  return encoding === undefined || encoding.toLowerCase() === 'identity';
}

export class WebhookFastPath {
  constructor(private readonly deps: WebhookFastPathDeps) {}

  /** Handles a request `takesRequest` accepted; never throws (every failure is an answer). */
  handle(req: IncomingMessage, res: ServerResponse): void {
    const started = process.hrtime.bigint();
    const { deps } = this;
    const address = deps.addressOf(req);
    const send = (status: number, body: Record<string, unknown>, extra?: OutgoingHttpHeaders) =>
      sendJson(res, status, body, deps.securityHeaders, extra);
    const wait = refusalWait(deps.refusals, address);
    if (wait !== null) {
      send(
        429,
        { error: 'too many refused deliveries from this address; retry later' },
        { 'Retry-After': String(wait) },
      );
      return;
    }
    const answer = (result: WebhookAnswer) => {
      countAnswer(deps.refusals, address, result.status);
      deps.handler.observe(started, result.outcome);
      send(result.status, result.body);
    };
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > MAX_WEBHOOK_BYTES) {
      answer(deps.handler.unreadable(413));
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    req.on('data', (chunk: Buffer) => {
      if (refused) return;
      size += chunk.length;
      if (size > MAX_WEBHOOK_BYTES) {
        refused = true;
        chunks.length = 0;
        answer(deps.handler.unreadable(413));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (refused) return;
      const raw = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      deps.handler
        .handle({ raw, headers: req.headers, ip: address })
        .then(answer)
        .catch((err: unknown) => this.failed(res, err, send));
    });
    // An aborted request has nobody to answer; the socket is gone with it.
    req.on('error', () => {
      refused = true;
    });
  }

  private failed(
    res: ServerResponse,
    err: unknown,
    send: (status: number, body: Record<string, unknown>, extra?: OutgoingHttpHeaders) => void,
  ): void {
    if (res.headersSent) return;
    if (this.deps.redisUnavailable?.(err)) {
      this.deps.logger.warn({ err }, 'request refused: Redis is unreachable');
      send(503, { error: REDIS_UNAVAILABLE_MESSAGE, code: REDIS_UNAVAILABLE_CODE }, { 'Retry-After': '5' });
      return;
    }
    this.deps.logger.error({ err }, 'request failed');
    send(500, { error: 'internal error' });
  }
}

/** Headers go in one writeHead: no header map is built and checked per answer, as setHeader would. */
function sendJson(
  res: ServerResponse,
  status: number,
  body: Record<string, unknown>,
  base: Readonly<OutgoingHttpHeaders>,
  extra?: OutgoingHttpHeaders,
): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...base,
    ...extra,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}

/**
 * The headers a connect-style middleware sets on an answer, taken once from a response that is never sent. For
 * helmet with a fixed configuration they are the same for every request.
 */
export function headersSetBy(
  middleware: (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void,
): OutgoingHttpHeaders {
  const req = new IncomingMessage(new Socket());
  const res = new ServerResponse(req);
  let failed: unknown = null;
  middleware(req, res, (err) => {
    failed = err ?? null;
  });
  if (failed) throw failed;
  return res.getHeaders();
}
