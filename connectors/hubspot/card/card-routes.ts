import express, { type NextFunction, type Request, type Response, Router } from 'express';
import type { RecordCardHost } from '../../../src/crm/record-card.js';
import { RecordCardError } from '../../../src/crm/record-card.js';
import type { Logger } from '../../../src/log.js';
import { HubSpotSignatureError } from '../errors.js';
import { HUBSPOT_KIND } from '../provider.js';
import { verifySignedRequest } from '../webhooks/webhook-signature.js';
import type { CardRateLimit } from './card-rate-limit.js';
import { cardDataOf } from './card-view.js';
import { type CardDecision, type CardErrorBody, cardDecisionSchema } from './ui/card-data.js';

/**
 * The HubSpot app card's routes: `GET /cards/hubspot/companies/:companyId` (the card's data) and, under it,
 * `POST …/decision` and `POST …/request`. HubSpot's `hubspot.fetch` signs each request (signature v3, the app's
 * client secret) and puts the portal and the user in its URL; a request is answered only when its signature is
 * valid and fresh, both are in the signed URL, the portal has a connected installation and the company is that
 * portal's. Each portal has CARD_REQUESTS_PER_MINUTE, counted only for signed requests (so nobody else can
 * spend a portal's budget).
 */

export const HUBSPOT_CARD_PATH = '/cards/hubspot/companies';

/** HubSpot's limit on a `hubspot.fetch` body (1 MB); the card's bodies are a few bytes. */
const CARD_BODY_LIMIT = '1mb';
const NUMERIC_ID = /^\d+$/;

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
interface CardCaller {
  portalId: string;
  userId: string;
  installationId: string;
}

function refuse(res: Response, status: number, body: CardErrorBody): void {
  res.status(status).json(body);
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

export function createHubSpotCardRouter(deps: HubSpotCardRouterDeps): Router {
  const router = Router();
  const publicUrl = deps.publicUrl.replace(/\/+$/, '');
  const callers = new WeakMap<Request, CardCaller>();

  router.use(HUBSPOT_CARD_PATH, express.raw({ type: '*/*', limit: CARD_BODY_LIMIT }));

  // Signature, identity, budget and installation, for every card route, in that order.
  router.use(HUBSPOT_CARD_PATH, async (req: Request, res: Response, next: NextFunction) => {
    try {
      verifySignedRequest(req, {
        publicUrl,
        clientSecret: deps.clientSecret,
        ...(deps.now ? { now: deps.now } : {}),
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
    const budget = await deps.limit.take(portalId);
    if (!budget.allowed) {
      res.set('Retry-After', String(budget.retryAfterSeconds));
      refuse(res, 429, {
        error: 'rate_limited',
        message: 'too many card requests from this portal; retry later',
        retryAfterSeconds: budget.retryAfterSeconds,
      });
      return;
    }
    const installation = await deps.cards.installationOf(HUBSPOT_KIND, portalId);
    if (installation?.status !== 'connected') {
      refuse(res, 403, {
        error: 'unknown_portal',
        message: 'this portal has no connected installation of the report connector',
      });
      return;
    }
    callers.set(req, { portalId, userId, installationId: installation.id });
    next();
  });

  const callerOf = (req: Request): CardCaller => {
    const caller = callers.get(req);
    if (!caller) throw new Error('card route reached without a checked caller');
    return caller;
  };

  /** The company's card data, or a 404 answered when the portal's CRM has no such company. */
  const answer = async (req: Request, res: Response, companyId: string): Promise<boolean> => {
    const source = await deps.cards.read(callerOf(req).installationId, companyId);
    if (!source) {
      refuse(res, 404, { error: 'unknown_company', message: `this portal has no company ${companyId}` });
      return false;
    }
    res.status(200).json(cardDataOf(source));
    return true;
  };

  const known = async (req: Request, res: Response, companyId: string): Promise<boolean> => {
    if (await deps.cards.read(callerOf(req).installationId, companyId)) return true;
    refuse(res, 404, { error: 'unknown_company', message: `this portal has no company ${companyId}` });
    return false;
  };

  const refusedAction = (res: Response, err: unknown): boolean => {
    if (!(err instanceof RecordCardError)) return false;
    refuse(res, err.status, { error: err.code, message: err.message });
    return true;
  };

  router.get(
    `${HUBSPOT_CARD_PATH}/:companyId`,
    async (req: Request<{ companyId: string }>, res: Response) => {
      if (!NUMERIC_ID.test(req.params.companyId)) {
        refuse(res, 404, { error: 'unknown_company', message: 'a company id is a number' });
        return;
      }
      await answer(req, res, req.params.companyId);
    },
  );

  router.post(
    `${HUBSPOT_CARD_PATH}/:companyId/decision`,
    async (req: Request<{ companyId: string }>, res: Response) => {
      const { companyId } = req.params;
      let decision: CardDecision;
      try {
        const body: unknown = JSON.parse(Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '');
        decision = cardDecisionSchema.parse(body);
      } catch {
        refuse(res, 400, {
          error: 'invalid_decision',
          message: 'a decision is {"action":"accept","slug":"…"} or {"action":"reject"}',
        });
        return;
      }
      if (!NUMERIC_ID.test(companyId) || !(await known(req, res, companyId))) {
        if (!res.headersSent)
          refuse(res, 404, { error: 'unknown_company', message: 'a company id is a number' });
        return;
      }
      const caller = callerOf(req);
      try {
        await deps.cards.decide(caller.installationId, companyId, decision, {
          kind: 'crm-user',
          id: caller.userId,
        });
      } catch (err) {
        if (refusedAction(res, err)) return;
        throw err;
      }
      deps.logger?.info(
        { installationId: caller.installationId, companyId, action: decision.action, userId: caller.userId },
        'HubSpot card: review decision taken',
      );
      await answer(req, res, companyId);
    },
  );

  router.post(
    `${HUBSPOT_CARD_PATH}/:companyId/request`,
    async (req: Request<{ companyId: string }>, res: Response) => {
      const { companyId } = req.params;
      if (!NUMERIC_ID.test(companyId) || !(await known(req, res, companyId))) {
        if (!res.headersSent)
          refuse(res, 404, { error: 'unknown_company', message: 'a company id is a number' });
        return;
      }
      const caller = callerOf(req);
      try {
        await deps.cards.request(caller.installationId, companyId, { kind: 'crm-user', id: caller.userId });
      } catch (err) {
        if (refusedAction(res, err)) return;
        throw err;
      }
      deps.logger?.info(
        { installationId: caller.installationId, companyId, userId: caller.userId },
        'HubSpot card: report requested',
      );
      await answer(req, res, companyId);
    },
  );

  // Body-parser failures as short JSON, never a stack trace.
  router.use(HUBSPOT_CARD_PATH, (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    const status =
      typeof err === 'object' && err !== null && 'status' in err ? Number(err.status) : undefined;
    if (status !== undefined && status >= 400 && status < 500) {
      refuse(res, status, { error: 'bad_request', message: 'the request body could not be read' });
      return;
    }
    next(err);
  });

  return router;
}
