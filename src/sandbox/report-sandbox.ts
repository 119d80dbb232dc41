import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { type ApiKey, ApiKeyRegistry, type KeyRegistration } from './api-keys.js';
import { apiRouter } from './api-routes.js';
import { controlRouter } from './control-routes.js';
import { type Delivery, EventDispatcher, type SandboxEvent } from './event-dispatcher.js';
import { FaultInjector, type FaultSettings } from './faults.js';
import { type FixtureReport, loadFixtureReports, parseFixtureReports } from './fixtures.js';
import { errorBody, SandboxHttpError } from './http-error.js';
import { FixedWindowRateLimiter } from './rate-limiter.js';
import { ReportStore } from './report-store.js';
import { applyReportUpdate, type ReportUpdate } from './report-updates.js';
import {
  type AnswerCounts,
  AnswerTally,
  ReadTally,
  RequestCounter,
  type RequestFilter,
} from './request-counter.js';
import type { SandboxContext, SandboxLogger } from './sandbox-context.js';
import {
  API_PREFIX,
  CONTROL_PREFIX,
  DEFAULT_RATE_LIMIT_PER_MINUTE,
  REQUEST_ID_HEADER,
} from './sandbox-facts.js';
import { publishSubmission, type SubmissionPublication } from './submission-publication.js';
import { type Submission, SubmissionStore } from './submission-store.js';

export interface SandboxOptions {
  /** Requests per key per minute (default 600). */
  rateLimitPerMinute?: number;
  /** Where signed events are POSTed; without it events are only recorded. */
  webhookUrl?: string;
  /** Standard Webhooks secret (`whsec_…`); any other string signs with its UTF-8 bytes. */
  webhookSecret?: string;
  /** Pauses before each delivery retry (default 1 s, 5 s, 25 s); tests pass short ones. */
  webhookRetryDelaysMs?: number[];
  /** Reports to serve instead of `fixtures/reports.json` (validated the same way). */
  fixtures?: FixtureReport[];
  logger?: SandboxLogger;
}

export interface ListeningSandbox {
  /** The service's `{base_url}`: `http://HOST:PORT/api`. */
  url: string;
  port: number;
  close(): Promise<void>;
}

interface BodyParserError {
  type: string;
  status: number;
}

function isBodyParserError(err: unknown): err is BodyParserError {
  return (
    typeof err === 'object' &&
    err !== null &&
    typeof (err as { type?: unknown }).type === 'string' &&
    typeof (err as { status?: unknown }).status === 'number'
  );
}

/**
 * A local Published Report Lookup Service: the interface's routes over fixture data, plus control routes and
 * helpers that let tests change reports, inject faults and count requests.
 */
export class ReportSandbox {
  readonly app: Express;
  private readonly context: SandboxContext;
  private readonly servers = new Set<Server>();

  constructor(options: SandboxOptions = {}) {
    const reports = options.fixtures ? parseFixtureReports(options.fixtures) : loadFixtureReports();
    const events = new EventDispatcher({
      webhookUrl: options.webhookUrl,
      webhookSecret: options.webhookSecret,
      retryDelaysMs: options.webhookRetryDelaysMs,
      logger: options.logger,
    });
    this.context = {
      store: new ReportStore(reports),
      keys: new ApiKeyRegistry(),
      limiter: new FixedWindowRateLimiter(),
      burstLimiter: new FixedWindowRateLimiter(1_000),
      faults: new FaultInjector(),
      requests: new RequestCounter(),
      reads: new ReadTally(),
      searches: new ReadTally(),
      answers: new AnswerTally(),
      events,
      submissions: new SubmissionStore(),
      rateLimitPerMinute: options.rateLimitPerMinute ?? DEFAULT_RATE_LIMIT_PER_MINUTE,
      logger: options.logger,
    };
    this.app = this.buildApp();
  }

  private buildApp(): Express {
    const app = express();
    app.disable('x-powered-by');
    app.use((_req: Request, res: Response, next: NextFunction) => {
      const requestId = `req_${randomBytes(8).toString('hex')}`;
      res.locals.requestId = requestId;
      res.set(REQUEST_ID_HEADER, requestId);
      next();
    });
    app.use(`${API_PREFIX}${CONTROL_PREFIX}`, controlRouter(this.context));
    app.use(API_PREFIX, apiRouter(this.context));
    app.use((req: Request, res: Response) => {
      res
        .status(404)
        .json(errorBody('not_found', `no route ${req.method} ${req.path}`, res.locals.requestId));
    });
    app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
      const requestId: string = res.locals.requestId;
      if (err instanceof SandboxHttpError) {
        res
          .status(err.status)
          .set(err.headers)
          .json(errorBody(err.code, err.message, requestId));
        return;
      }
      if (isBodyParserError(err) && err.status >= 400 && err.status < 500) {
        const code = err.type === 'entity.parse.failed' ? 'invalid_json' : err.type.replace(/\W+/g, '_');
        const message =
          err.status === 413 ? 'the request body is too large' : 'the request body could not be read as JSON';
        res.status(err.status).json(errorBody(code, message, requestId));
        return;
      }
      this.context.logger?.error({ err, method: req.method, path: req.path }, 'sandbox request failed');
      const message = err instanceof Error ? err.message : String(err);
      res.status(500).json(errorBody('internal', message, requestId));
    });
    return app;
  }

  /** Starts serving; `url` is the `{base_url}` to give a client. */
  async listen(port = 0, host = '127.0.0.1'): Promise<ListeningSandbox> {
    const server = this.app.listen(port, host);
    await once(server, 'listening');
    this.servers.add(server);
    const address = server.address() as AddressInfo;
    const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return {
      url: `http://${urlHost}:${address.port}${API_PREFIX}`,
      port: address.port,
      close: () => this.close(),
    };
  }

  /** Stops every listener and pending webhook retry. */
  async close(): Promise<void> {
    const closing = [...this.servers].map(async (server) => {
      const closed = once(server, 'close');
      server.close();
      server.closeAllConnections();
      await closed;
    });
    this.servers.clear();
    await Promise.all([...closing, this.context.events.close()]);
  }

  /** The stored report, published or not (with its `published` flag). */
  getReport(slug: string): FixtureReport | undefined {
    return this.context.store.get(slug);
  }

  listReports(): FixtureReport[] {
    return this.context.store.list();
  }

  /** Same rule as `POST /api/__sandbox/reports/:slug`; throws SandboxHttpError (400/404) for a bad patch. */
  updateReport(slug: string, patch: unknown): ReportUpdate {
    return applyReportUpdate(this.context.store, this.context.events, slug, patch);
  }

  emitEvent(type: string, data: SandboxEvent['data']): SandboxEvent {
    return this.context.events.emit(type, data);
  }

  configureWebhook(url: string | undefined, secret: string | undefined): void {
    this.context.events.configure(url, secret);
  }

  get events(): SandboxEvent[] {
    return this.context.events.events;
  }

  get deliveries(): Delivery[] {
    return this.context.events.deliveries;
  }

  /** Resolves when every delivery has succeeded or used up its retries. */
  waitForDeliveries(): Promise<void> {
    return this.context.events.idle();
  }

  /** Every submission made through `POST /v1/submissions`, with its documents and, once published, its slug. */
  listSubmissions(): Submission[] {
    return this.context.submissions.list();
  }

  getSubmission(id: string): Submission | undefined {
    return this.context.submissions.get(id);
  }

  /** Same rule as `POST /api/__sandbox/submissions/:id/publish`: builds, publishes and announces the report. */
  publishSubmission(id: string, overrides: unknown = {}): SubmissionPublication {
    return publishSubmission(this.context, id, overrides);
  }

  registerKey(registration: KeyRegistration): ApiKey {
    return this.context.keys.register(registration);
  }

  setFaults(faults: FaultSettings): FaultSettings {
    return this.context.faults.set(faults);
  }

  clearFaults(): void {
    this.context.faults.clear();
  }

  /** API requests that arrived, optionally only for one route label and/or one bearer key. */
  requestCount(filter?: RequestFilter): number {
    return this.context.requests.count(filter);
  }

  /**
   * Report reads that were answered (200, or 404 for a slug not published), per slug: what a client spent
   * reading, without its throttled (429) and failed (5xx) attempts.
   */
  answeredReads(): Map<string, number> {
    return this.context.reads.answered();
  }

  /**
   * Searches that were answered, per query (its `q` and `industry`): how often a client searched the
   * same name, without its throttled and failed attempts.
   */
  answeredSearches(): Map<string, number> {
    return this.context.searches.answered();
  }

  /** API answers by status since the last reset (429s and injected 503s included), and their first and last time. */
  answerCounts(): AnswerCounts {
    return this.context.answers.counts();
  }

  resetRequestCounts(): void {
    this.context.requests.reset();
    this.context.reads.reset();
    this.context.searches.reset();
    this.context.answers.reset();
  }

  /** Forgets every key's rate-limit windows. */
  resetRateLimits(): void {
    this.context.limiter.reset();
    this.context.burstLimiter.reset();
  }
}

export function createSandbox(options: SandboxOptions = {}): ReportSandbox {
  return new ReportSandbox(options);
}
