import { type Request, type Response, Router } from 'express';
import { notConfiguredPage, type OAuthPageRenderer, sendNotConfigured } from '../../../src/crm/oauth-page.js';
import { callbackRoute } from './callback-route.js';
import { installRoute } from './install-route.js';
import { HUBSPOT_CALLBACK_PATH, HUBSPOT_INSTALL_PATH, type HubSpotOAuthRouterDeps } from './oauth-flow.js';

/**
 * `GET /oauth/hubspot/install` sends the admin to HubSpot's consent screen with a signed state bound to the
 * browser by a cookie (install-route.ts); `GET /oauth/hubspot/callback` checks that state and cookie, exchanges
 * the code, stores the installation with sealed tokens, hands it to `onInstalled` and sends the admin to
 * `/admin?installed=<id>` (callback-route.ts). Every failure is a short page saying what happened and what to do
 * (oauth-flow.ts); no stack trace reaches the browser. A CRM admin who is not the connector's operator lands on
 * the admin's login after a let-in install: the login says why (page-routes.ts, `installed=`).
 */
export function createHubSpotOAuthRouter(deps: HubSpotOAuthRouterDeps): Router {
  const router = Router();
  router.get(HUBSPOT_INSTALL_PATH, installRoute(deps));
  router.get(HUBSPOT_CALLBACK_PATH, callbackRoute(deps));
  return router;
}

/** The install route when HUBSPOT_CLIENT_ID or HUBSPOT_CLIENT_SECRET is missing: says which, never a bare 404. */
export function createHubSpotNotConfiguredRouter(o: {
  missing: readonly string[];
  tokenVariable: string;
  renderPage?: OAuthPageRenderer;
}): Router {
  const router = Router();
  router.get(HUBSPOT_INSTALL_PATH, (req: Request, res: Response) => {
    const page = notConfiguredPage({
      crmLabel: 'HubSpot',
      missing: o.missing,
      explain:
        "They are the HubSpot app's client id and secret (its Auth settings), with the redirect URL <APP_URL>" +
        `${HUBSPOT_CALLBACK_PATH}.`,
      otherwise: `A single portal can be connected without OAuth: set ${o.tokenVariable} (a private app's token).`,
    });
    sendNotConfigured(req, res, page, o.missing, o.renderPage);
  });
  return router;
}
