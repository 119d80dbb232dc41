import type { NextFunction, Request, Response } from 'express';
import {
  answer,
  type CardRouteContext,
  callerOf,
  knownCompany,
  NUMERIC_ID,
  refuse,
  refusedAction,
} from './card-context.js';
import { type CardDecision, cardDecisionSchema } from './ui/card-data.js';

/** The card's routes, each behind the caller check (card-caller.ts); card-routes.ts mounts them. */

type CompanyRequest = Request<{ companyId: string }>;

/** `GET …/:companyId`: the company's card data. */
export function readCardRoute(ctx: CardRouteContext) {
  return async (req: CompanyRequest, res: Response): Promise<void> => {
    if (!NUMERIC_ID.test(req.params.companyId)) {
      refuse(res, 404, { error: 'unknown_company', message: 'a company id is a number' });
      return;
    }
    await answer(ctx, req, res, req.params.companyId);
  };
}

/** `POST …/:companyId/decision`: the review decision a CRM user took on the card, then the card's new data. */
export function decisionRoute(ctx: CardRouteContext) {
  return async (req: CompanyRequest, res: Response): Promise<void> => {
    const { companyId } = req.params;
    const decision = decisionOf(req.body);
    if (!decision) {
      refuse(res, 400, {
        error: 'invalid_decision',
        message: 'a decision is {"action":"accept","slug":"…"} or {"action":"reject"}',
      });
      return;
    }
    if (!(await knownCompany(ctx, req, res, companyId))) return;
    const caller = callerOf(ctx, req);
    try {
      await ctx.deps.cards.decide(caller.installationId, companyId, decision, {
        kind: 'crm-user',
        id: caller.userId,
      });
    } catch (err) {
      if (refusedAction(res, err)) return;
      throw err;
    }
    ctx.deps.logger?.info(
      { installationId: caller.installationId, companyId, action: decision.action, userId: caller.userId },
      'HubSpot card: review decision taken',
    );
    await answer(ctx, req, res, companyId);
  };
}

/** `POST …/:companyId/request`: a report requested for the company, then the card's new data. */
export function requestRoute(ctx: CardRouteContext) {
  return async (req: CompanyRequest, res: Response): Promise<void> => {
    const { companyId } = req.params;
    if (!(await knownCompany(ctx, req, res, companyId))) return;
    const caller = callerOf(ctx, req);
    try {
      await ctx.deps.cards.request(caller.installationId, companyId, { kind: 'crm-user', id: caller.userId });
    } catch (err) {
      if (refusedAction(res, err)) return;
      throw err;
    }
    ctx.deps.logger?.info(
      { installationId: caller.installationId, companyId, userId: caller.userId },
      'HubSpot card: report requested',
    );
    await answer(ctx, req, res, companyId);
  };
}

/** Body-parser failures as short JSON, never a stack trace. */
export function cardBodyErrors(err: unknown, _req: Request, res: Response, next: NextFunction): void {
  const status = typeof err === 'object' && err !== null && 'status' in err ? Number(err.status) : undefined;
  if (status !== undefined && status >= 400 && status < 500) {
    refuse(res, status, { error: 'bad_request', message: 'the request body could not be read' });
    return;
  }
  next(err);
}

/** The raw body as a decision, or null when it is not JSON of the decision's shape. */
function decisionOf(body: unknown): CardDecision | null {
  try {
    return cardDecisionSchema.parse(JSON.parse(Buffer.isBuffer(body) ? body.toString('utf8') : ''));
  } catch {
    return null;
  }
}
