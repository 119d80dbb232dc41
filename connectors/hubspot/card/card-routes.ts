import express, { Router } from 'express';
import { checkCardCaller } from './card-caller.js';
import type { CardRouteContext, HubSpotCardRouterDeps } from './card-context.js';
import { cardBodyErrors, decisionRoute, readCardRoute, requestRoute } from './card-handlers.js';

/**
 * The HubSpot app card's routes: `GET /cards/hubspot/companies/:companyId` (the card's data) and, under it,
 * `POST …/decision` and `POST …/request`. HubSpot's `hubspot.fetch` signs each request (signature v3, the app's
 * client secret) and puts the portal and the user in its URL; a request is answered only when its signature is
 * valid and fresh, both are in the signed URL, the portal has a connected installation and the company is that
 * portal's. Each portal has CARD_REQUESTS_PER_MINUTE, counted only for signed requests (so nobody else can
 * spend a portal's budget). The check is card-caller.ts, the routes card-handlers.ts.
 */

export const HUBSPOT_CARD_PATH = '/cards/hubspot/companies';

/** HubSpot's limit on a `hubspot.fetch` body (1 MB); the card's bodies are a few bytes. */
const CARD_BODY_LIMIT = '1mb';

export function createHubSpotCardRouter(deps: HubSpotCardRouterDeps): Router {
  const ctx: CardRouteContext = { deps, callers: new WeakMap() };
  const router = Router();
  router.use(HUBSPOT_CARD_PATH, express.raw({ type: '*/*', limit: CARD_BODY_LIMIT }));
  // Signature, identity, budget and installation, for every card route, in that order.
  router.use(HUBSPOT_CARD_PATH, checkCardCaller(ctx));
  router.get(`${HUBSPOT_CARD_PATH}/:companyId`, readCardRoute(ctx));
  router.post(`${HUBSPOT_CARD_PATH}/:companyId/decision`, decisionRoute(ctx));
  router.post(`${HUBSPOT_CARD_PATH}/:companyId/request`, requestRoute(ctx));
  router.use(HUBSPOT_CARD_PATH, cardBodyErrors);
  return router;
}
