import type { Request, Response } from 'express';
import { ALERT_NOTES_INSTALL_PARAM } from '../provider.js';
import { type HubSpotOAuthRouterDeps, hubspotAuthorizeUrl } from './oauth-flow.js';

/**
 * `GET /oauth/hubspot/install`: a signed state bound to the browser by a cookie, and a redirect to HubSpot's
 * consent screen. Nothing is stored: the state's private half travels in the cookie (see auth/oauth-state.ts).
 */
export function installRoute(deps: HubSpotOAuthRouterDeps) {
  return (req: Request, res: Response): void => {
    const { state, cookie } = deps.states.issue('hubspot');
    res
      .append('Set-Cookie', cookie)
      .set('cache-control', 'no-store')
      .redirect(
        302,
        hubspotAuthorizeUrl(deps, state, { alertNotes: req.query[ALERT_NOTES_INSTALL_PARAM] === '1' }),
      );
  };
}
