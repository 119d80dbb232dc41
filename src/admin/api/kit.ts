import type { Request, Response } from 'express';
import type { z } from 'zod';
import type { AppContext } from '../../app/context.js';
import type { AdminActions } from '../admin-actions.js';
import { AdminRequestError, badRequest, installationNotFound } from '../errors.js';
import type { MassPreview } from '../mass-actions.js';
import type { AdminOverview } from '../overview.js';
import { installationIdSchema } from '../schemas.js';

/** What every group of admin API routes is handed. */
export interface ApiKit {
  ctx: AppContext;
  actions: AdminActions;
  overview: AdminOverview;
}

export function parse<S extends z.ZodType>(schema: S, value: unknown, what: string): z.infer<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw badRequest(result.error, what);
  return result.data;
}

export function jsonBody(req: Request): unknown {
  if (req.body === undefined) {
    throw new AdminRequestError(400, 'BAD_REQUEST', 'Send a JSON body with Content-Type: application/json.');
  }
  return req.body;
}

/** An id that cannot be an installation's names no installation: 404, as for a well-formed unknown id. */
export function installationParam(req: Request): string {
  const result = installationIdSchema.safeParse(req.params.id);
  if (!result.success) throw installationNotFound(String(req.params.id));
  return result.data;
}

/** `review-queue-<installation id>-2026-11-26.csv`: which installation and which day, so downloads do not collide. */
export function csvName(what: string, installationId: string): string {
  return `${what}-${installationId.replace(/[^A-Za-z0-9_-]/g, '_')}-${new Date().toISOString().slice(0, 10)}.csv`;
}

/** A download: the admin's browser saves it under `filename` (still no-store, as every admin answer). */
export function sendCsv(res: Response, filename: string, body: string): void {
  res
    .status(200)
    .type('text/csv; charset=utf-8')
    .set('Content-Disposition', `attachment; filename="${filename}"`)
    .set('X-Content-Type-Options', 'nosniff')
    .send(body);
}

/** `?dryRun=1`: what a mass action would do; nothing was changed. */
export function dryRunAnswer(p: MassPreview) {
  return { dryRun: true, count: p.count, sample: p.sample, leftAlone: p.leftAlone, confirm: p.confirm };
}
