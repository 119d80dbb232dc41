import { setTimeout as sleep } from 'node:timers/promises';
import express, {
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
  Router,
} from 'express';
import { type ApiKey, bearerToken, requireScope } from './api-keys.js';
import { isPlainObject } from './deep-merge.js';
import { toPublicReport } from './fixtures.js';
import { runGraphql } from './graphql-api.js';
import { SandboxHttpError } from './http-error.js';
import type { QuotaState } from './rate-limiter.js';
import type { SandboxContext } from './sandbox-context.js';
import { MAX_DOCUMENT_BYTES, ROUTES, type RouteLabel, type Scope } from './sandbox-facts.js';
import { parseSearchParams, searchReports } from './search.js';
import { parseSubmissionContent, type UploadedFile } from './submission-store.js';

/**
 * The interface's `/v1` routes. Each runs the same gate, in the order a real edge would: count the arrival,
 * injected delay and failure, authentication (401), the key's rate limit (429), then the scope (403).
 */

function keyOf(res: Response): ApiKey {
  const key: unknown = res.locals.apiKey;
  if (!key) throw new Error('route reached without an authenticated key');
  return key as ApiKey;
}

function gate(context: SandboxContext, route: RouteLabel, scope: Scope): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    context.requests.record(route, bearerToken(req.get('authorization')) ?? null);
    res.on('finish', () => context.answers.record(res.statusCode));
    const { faults } = context;
    if (faults.delayMs > 0) await sleep(faults.delayMs);
    if (faults.shouldFail()) throw new SandboxHttpError(503, 'unavailable', 'injected failure: try again');
    const key = context.keys.authenticate(req.get('authorization'), faults.revokedKeys);
    const style = faults.rateLimitHeaders;
    const minute = context.limiter.take(
      key.key,
      key.rateLimitPerMinute ?? faults.rateLimitPerMinute ?? context.rateLimitPerMinute,
      style && ((state) => rateLimitHeaders(style, state)),
    );
    const second =
      faults.ratePerSecond === undefined
        ? undefined
        : context.burstLimiter.take(
            key.key,
            faults.ratePerSecond,
            style && ((state) => rateLimitHeaders(style, nearer(minute, state))),
          );
    if (style) res.set(rateLimitHeaders(style, second ? nearer(minute, second) : minute));
    requireScope(key, scope);
    res.locals.apiKey = key;
    next();
  };
}

/** The limit nearer to running out (fewest requests left; the shorter window on a tie). */
function nearer(a: QuotaState, b: QuotaState): QuotaState {
  if (a.remaining !== b.remaining) return a.remaining < b.remaining ? a : b;
  return a.windowMs <= b.windowMs ? a : b;
}

function rateLimitHeaders(style: 'ietf' | 'x-ratelimit', q: QuotaState): Record<string, string> {
  if (style === 'ietf') {
    return {
      'ratelimit-limit': String(q.limit),
      'ratelimit-remaining': String(q.remaining),
      'ratelimit-reset': String(Math.ceil(q.resetMs / 1000)),
      'ratelimit-policy': `${q.limit};w=${Math.ceil(q.windowMs / 1000)}`,
    };
  }
  return {
    'x-ratelimit-limit': String(q.limit),
    'x-ratelimit-remaining': String(q.remaining),
    'x-ratelimit-reset': String(Math.ceil((Date.now() + q.resetMs) / 1000)),
  };
}

/** A path parameter; typed loosely once a route has middleware in front of its handler. */
function pathParam(req: Request, name: string): string {
  const value: unknown = req.params[name];
  if (typeof value !== 'string') throw new SandboxHttpError(400, 'invalid_path', `missing ${name}`);
  return value;
}

function jsonObjectBody(req: Request): Record<string, unknown> {
  if (!isPlainObject(req.body)) {
    throw new SandboxHttpError(400, 'invalid_body', 'send a JSON object with Content-Type: application/json');
  }
  return req.body;
}

/**
 * The first file part of a multipart body. Parsed by the platform's own `FormData` reader, so the sandbox
 * needs no multipart library; a body without a non-empty file part is a 400.
 */
async function fileFromMultipart(req: Request): Promise<UploadedFile> {
  const raw: unknown = req.body;
  if (!(raw instanceof Buffer)) throw new SandboxHttpError(400, 'invalid_body', 'send a multipart body');
  let form: FormData;
  try {
    form = await new Response(new Uint8Array(raw), {
      headers: { 'content-type': req.get('content-type') ?? '' },
    }).formData();
  } catch {
    throw new SandboxHttpError(400, 'invalid_body', 'the multipart body could not be read');
  }
  for (const value of form.values()) {
    if (typeof value === 'string') continue;
    if (value.size === 0) throw new SandboxHttpError(400, 'invalid_body', 'the file part is empty');
    return {
      filename: value.name || 'document',
      contentType: value.type || 'application/octet-stream',
      bytes: new Uint8Array(await value.arrayBuffer()),
    };
  }
  throw new SandboxHttpError(400, 'invalid_body', 'the multipart body has no file part');
}

export function apiRouter(context: SandboxContext): Router {
  const router = Router();
  const json = express.json({ type: ['application/json', 'application/*+json'], limit: '1mb' });
  const multipart = express.raw({ type: 'multipart/form-data', limit: MAX_DOCUMENT_BYTES });

  router.get('/v1/reports/:slug', gate(context, ROUTES.report, 'read'), (req, res) => {
    const slug = pathParam(req, 'slug');
    // Counted here, past the gate: only reads that get an answer (the report, or 404 below).
    context.reads.record(slug);
    const report = context.store.getPublished(slug);
    if (!report) throw new SandboxHttpError(404, 'not_found', `no published report ${slug}`);
    res.json(toPublicReport(report));
  });

  router.get('/v1/search', gate(context, ROUTES.search, 'read'), (req, res) => {
    const criteria = parseSearchParams(req.query as Record<string, unknown>);
    context.searches.record(JSON.stringify([criteria.q ?? null, criteria.industry ?? null]));
    const { results, total } = searchReports(context.store.published(), criteria);
    res.json({ results, count: results.length, total });
  });

  router.post('/v1/graphql', gate(context, ROUTES.graphql, 'read'), json, async (req, res) => {
    const answer = await runGraphql(req.body, { key: keyOf(res), store: context.store });
    res.status(answer.status).json(answer.body);
  });

  router.post('/v1/submissions', gate(context, ROUTES.submissions, 'write'), json, (req, res) => {
    const submission = context.submissions.create(parseSubmissionContent(jsonObjectBody(req)));
    res.status(201).json({ id: submission.id, status: submission.status, created_at: submission.created_at });
  });

  router.post(
    '/v1/submissions/:id/documents',
    gate(context, ROUTES.documents, 'write'),
    json,
    multipart,
    async (req, res) => {
      const id = pathParam(req, 'id');
      const document = req.is('multipart/form-data')
        ? context.submissions.addFile(id, await fileFromMultipart(req))
        : context.submissions.addDocument(id, jsonObjectBody(req));
      res
        .status(201)
        .json({ id: document.id, submission_id: document.submission_id, created_at: document.created_at });
    },
  );

  return router;
}
