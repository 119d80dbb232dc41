import type { NextFunction, Request, Response } from 'express';
import { HubSpotSignatureError } from '../errors.js';
import { HUBSPOT_KIND } from '../provider.js';
import { verifySignedRequest } from '../webhooks/webhook-signature.js';
import { type CardRouteContext, NUMERIC_ID, refuse } from './card-context.js';

/**
 * The check in front of every card route: the signature (v3, fresh), the portal and user named in the signed
 * URL, the portal's budget (counted only for signed requests, so nobody else can spend it), and a connected
 * installation, in that order. A request that passes carries its caller on.
 */
export function checkCardCaller(ctx: CardRouteContext) {
  const publicUrl = ctx.deps.publicUrl.replace(/\/+$/, '');
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    try {
      verifySignedRequest(req, {
        publicUrl,
        clientSecret: ctx.deps.clientSecret,
        ...(ctx.deps.now ? { now: ctx.deps.now } : {}),
      });
    } catch (err) {
      if (err instanceof HubSpotSignatureError) {
        refuse(res, 401, { error: 'invalid_signature', message: err.message });
        return;
      }
      throw err;
    }
    const portalId = queryValue(req, 'portalId');
    const userId = queryValue(req, 'userId');
    if (!portalId || !userId) {
      refuse(res, 401, {
        error: 'unsigned_identity',
        message: 'the signed URL must name the portal and the user (portalId and userId)',
      });
      return;
    }
    const installationId = await admittedInstallation(ctx, res, portalId);
    if (!installationId) return;
    ctx.callers.set(req, { portalId, userId, installationId });
    next();
  };
}

/** The portal's connected installation, once its budget allows; answers 429 or 403 and returns null otherwise. */
async function admittedInstallation(
  ctx: CardRouteContext,
  res: Response,
  portalId: string,
): Promise<string | null> {
  const budget = await ctx.deps.limit.take(portalId);
  if (!budget.allowed) {
    res.set('Retry-After', String(budget.retryAfterSeconds));
    refuse(res, 429, {
      error: 'rate_limited',
      message: 'too many card requests from this portal; retry later',
      retryAfterSeconds: budget.retryAfterSeconds,
    });
    return null;
  }
  const installation = await ctx.deps.cards.installationOf(HUBSPOT_KIND, portalId);
  if (installation?.status !== 'connected') {
    refuse(res, 403, {
      error: 'unknown_portal',
      message: 'this portal has no connected installation of the report connector',
    });
    return null;
  }
  return installation.id;
}

/**
 * One numeric query value. The card names its portal and user in the URL and HubSpot may add the same names
 * again (its documentation does not say): a repeat is accepted only when every copy says the same.
 */
function queryValue(req: Request, name: string): string | null {
  const raw = req.query[name];
  const values = Array.isArray(raw) ? raw : [raw];
  const first = values[0];
  if (typeof first !== 'string' || !NUMERIC_ID.test(first)) return null;
  return values.every((value) => value === first) ? first : null;
}
