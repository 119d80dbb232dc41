import { Router } from 'express';
import { hostPolicyOf } from '../hosts.js';
import { callbackRoute } from './callback-route.js';
import { installRoute } from './install-route.js';
import type { SalesforceOAuthContext, SalesforceOAuthDeps } from './oauth-context.js';

/**
 * The OAuth 2.0 web server flow with PKCE. `/install` makes a code verifier (pkce.ts), seals it into the
 * browser's state cookie (never in the URL, never stored server-side), and sends the admin to Salesforce with the
 * S256 challenge. `/install?connection=<id>` signs in through that Salesforce connection's External Client App
 * instead of the global one (SALESFORCE_CLIENT_ID); the connection id rides in the sealed state too, and the
 * installation records it, so refresh and revoke use the same app. `/callback` consumes the state, trades the
 * code and verifier for tokens, checks the token response's signature, asks the identity URL with the new token
 * which org and integration user it belongs to (identity.ts: the token answer's `id` alone is not trusted), binds
 * a connection to the org of its first install, and stores the installation (tokens sealed by the
 * InstallationStore, which holds a change of connection or instance host for the operator's approval). The login,
 * instance and identity URLs must be Salesforce hosts (hosts.ts). Every failure ends on a page that says what
 * happened and what to do (oauth-context.ts); the two routes are install-route.ts and callback-route.ts.
 */

export const SALESFORCE_OAUTH_ROUTES = {
  install: '/oauth/salesforce/install',
  callback: '/oauth/salesforce/callback',
} as const;

export function createSalesforceOAuthRouter(deps: SalesforceOAuthDeps): Router {
  const ctx: SalesforceOAuthContext = {
    deps,
    policy: hostPolicyOf(deps.config),
    redirectUri: `${deps.config.appUrl}${SALESFORCE_OAUTH_ROUTES.callback}`,
    installBase: `${deps.config.appUrl}${SALESFORCE_OAUTH_ROUTES.install}`,
  };
  const router = Router();
  router.get(SALESFORCE_OAUTH_ROUTES.install, installRoute(ctx));
  router.get(SALESFORCE_OAUTH_ROUTES.callback, callbackRoute(ctx));
  return router;
}
