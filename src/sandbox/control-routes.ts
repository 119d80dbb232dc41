import express, { type NextFunction, type Request, type Response, Router } from 'express';
import { z } from 'zod';
import { isPlainObject } from './deep-merge.js';
import { faultSettingsSchema } from './faults.js';
import { SandboxHttpError } from './http-error.js';
import { applyReportUpdate } from './report-updates.js';
import type { SandboxContext } from './sandbox-context.js';
import { SCOPES } from './sandbox-facts.js';
import { publishSubmission } from './submission-publication.js';

/**
 * `/__sandbox/...`: how a person or a test changes the sandbox while it runs. No authentication, so these
 * answer only callers on this machine.
 */

export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  return v4.startsWith('127.') || address === '::1';
}

function loopbackOnly(req: Request, _res: Response, next: NextFunction): void {
  if (!isLoopbackAddress(req.socket.remoteAddress)) {
    throw new SandboxHttpError(403, 'forbidden', 'sandbox control routes answer only loopback callers');
  }
  next();
}

function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new SandboxHttpError(400, 'invalid_body', z.prettifyError(parsed.error));
  return parsed.data;
}

const eventRequestSchema = z.strictObject({
  type: z.string().min(1),
  data: z.looseObject({ slug: z.string().optional() }).default({}),
});

const keyRequestSchema = z.strictObject({
  key: z.string().regex(/^\S+$/).optional(),
  scopes: z.array(z.enum(SCOPES)).min(1),
  sandbox: z.boolean().optional(),
  rateLimitPerMinute: z.number().int().min(1).optional(),
});

const webhookRequestSchema = z.strictObject({
  url: z.url().nullable(),
  secret: z.string().min(1).nullish(),
});

export function controlRouter(context: SandboxContext): Router {
  const router = Router();
  router.use(loopbackOnly, express.json({ limit: '1mb' }));

  router.get('/reports/:slug', (req, res) => {
    const report = context.store.get(req.params.slug);
    if (!report) throw new SandboxHttpError(404, 'not_found', `no report ${req.params.slug}`);
    res.json(report);
  });

  router.post('/reports/:slug', (req, res) => {
    if (!isPlainObject(req.body)) throw new SandboxHttpError(400, 'invalid_patch', 'send a JSON object');
    const update = applyReportUpdate(context.store, context.events, req.params.slug, req.body);
    res.json(update);
  });

  router.get('/submissions', (_req, res) => {
    res.json({ submissions: context.submissions.list() });
  });

  router.get('/submissions/:id', (req, res) => {
    const submission = context.submissions.get(req.params.id);
    if (!submission) throw new SandboxHttpError(404, 'not_found', `no submission ${req.params.id}`);
    res.json(submission);
  });

  router.post('/submissions/:id/publish', (req, res) => {
    res.status(201).json(publishSubmission(context, req.params.id, req.body));
  });

  router.post('/events', (req, res) => {
    const request = parseBody(eventRequestSchema, req.body);
    res.status(202).json({ event: context.events.emit(request.type, request.data) });
  });

  router.get('/deliveries', (_req, res) => {
    res.json({ deliveries: context.events.deliveries, events: context.events.events });
  });

  router.post('/webhook', (req, res) => {
    const request = parseBody(webhookRequestSchema, req.body);
    context.events.configure(request.url ?? undefined, request.secret ?? undefined);
    res.status(204).end();
  });

  router.post('/faults', (req, res) => {
    res.json({ faults: context.faults.set(parseBody(faultSettingsSchema, req.body)) });
  });

  router.delete('/faults', (_req, res) => {
    context.faults.clear();
    res.status(204).end();
  });

  router.post('/keys', (req, res) => {
    const request = parseBody(keyRequestSchema, req.body);
    res.status(201).json(context.keys.register(request));
  });

  return router;
}
