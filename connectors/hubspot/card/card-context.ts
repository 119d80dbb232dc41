import type { Request, Response } from 'express';
import { RecordCardError, type RecordCardHost } from '../../../src/crm/record-card.js';
import type { Logger } from '../../../src/log.js';
import type { CardRateLimit } from './card-rate-limit.js';
import { cardDataOf } from './card-view.js';
import type { CardErrorBody } from './ui/card-data.js';

/** What the card's routes share: their dependencies, the checked caller of each request, and the answers. */

export interface HubSpotCardRouterDeps {
  clientSecret: string;
  /** `APP_URL`: HubSpot signs the public URL, which a proxy in front of the app may not pass on. */
  publicUrl: string;
  cards: RecordCardHost;
  limit: CardRateLimit;
  logger?: Logger;
  /** Epoch ms, for tests. */
  now?: () => number;
}

/** Who is asking: the portal and the HubSpot user, as the signed URL names them. */
export interface CardCaller {
  portalId: string;
  userId: string;
  installationId: string;
}

export interface CardRouteContext {
  deps: HubSpotCardRouterDeps;
  /** Set by the caller check (card-caller.ts) for each request it lets through. */
  callers: WeakMap<Request, CardCaller>;
}

export const NUMERIC_ID = /^\d+$/;

export function refuse(res: Response, status: number, body: CardErrorBody): void {
  res.status(status).json(body);
}

export function callerOf(ctx: CardRouteContext, req: Request): CardCaller {
  const caller = ctx.callers.get(req);
  if (!caller) throw new Error('card route reached without a checked caller');
  return caller;
}

function refuseUnknown(res: Response, companyId: string): void {
  refuse(res, 404, { error: 'unknown_company', message: `this portal has no company ${companyId}` });
}

/** The company's card data, or a 404 answered when the portal's CRM has no such company. */
export async function answer(
  ctx: CardRouteContext,
  req: Request,
  res: Response,
  companyId: string,
): Promise<boolean> {
  const source = await ctx.deps.cards.read(callerOf(ctx, req).installationId, companyId);
  if (!source) {
    refuseUnknown(res, companyId);
    return false;
  }
  res.status(200).json(cardDataOf(source));
  return true;
}

/** Whether the company id is a number the portal's CRM knows; answers the 404 when not. */
export async function knownCompany(
  ctx: CardRouteContext,
  req: Request,
  res: Response,
  companyId: string,
): Promise<boolean> {
  if (!NUMERIC_ID.test(companyId)) {
    refuse(res, 404, { error: 'unknown_company', message: 'a company id is a number' });
    return false;
  }
  if (await ctx.deps.cards.read(callerOf(ctx, req).installationId, companyId)) return true;
  refuseUnknown(res, companyId);
  return false;
}

/** A refusal of the record card host (RecordCardError) answered with its status; false for anything else. */
export function refusedAction(res: Response, err: unknown): boolean {
  if (!(err instanceof RecordCardError)) return false;
  refuse(res, err.status, { error: err.code, message: err.message });
  return true;
}
