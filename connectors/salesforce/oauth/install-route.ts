import type { Request, Response } from 'express';
import { connectionIdSchema } from '../connections/connections.js';
import { requireSalesforceHost, SalesforceHostRefusedError } from '../hosts.js';
import { OAUTH_PATHS, OAUTH_SCOPES, SALESFORCE_PROVIDER } from '../provider.js';
import {
  appFor,
  queryString,
  type SalesforceOAuthContext,
  sendPage,
  sendUnknownConnection,
} from './oauth-context.js';
import { createPkcePair } from './pkce.js';

/**
 * `GET /oauth/salesforce/install[?connection=<id>]`: a PKCE pair, its verifier (and the connection) sealed into
 * the browser's state cookie, and a redirect to the app's Salesforce login with the S256 challenge.
 */
export function installRoute(ctx: SalesforceOAuthContext) {
  return async (req: Request, res: Response): Promise<void> => {
    const named = queryString(req, 'connection');
    const parsed = named === undefined ? undefined : connectionIdSchema.safeParse(named);
    if (parsed && !parsed.success) return sendUnknownConnection(ctx, res);
    const connectionId = parsed?.data;
    const app = await appFor(ctx, req, res, connectionId);
    if (!app) return;
    try {
      requireSalesforceHost(app.loginUrl, ctx.policy, 'login URL');
    } catch (err) {
      if (!(err instanceof SalesforceHostRefusedError)) throw err;
      ctx.deps.logger.warn(
        { connection: connectionId, code: err.code },
        'salesforce install refused: login host',
      );
      return sendPage(ctx, res, 400, 'This install link cannot be used', [
        `${err.message}.`,
        "Ask the app's operator for an install link whose login URL is Salesforce's.",
      ]);
    }
    const pkce = createPkcePair();
    // The verifier (and the connection) are sealed into the browser's state cookie: nothing is stored
    // (see auth/oauth-state.ts).
    const { state, cookie } = ctx.deps.states.issue(SALESFORCE_PROVIDER, {
      codeVerifier: pkce.verifier,
      ...(connectionId ? { connectionId } : {}),
    });
    const authorize = new URL(`${app.loginUrl.replace(/\/+$/, '')}${OAUTH_PATHS.authorize}`);
    authorize.search = new URLSearchParams({
      response_type: 'code',
      client_id: app.clientId,
      redirect_uri: ctx.redirectUri,
      scope: OAUTH_SCOPES.join(' '),
      state,
      code_challenge: pkce.challenge,
      code_challenge_method: pkce.method,
    }).toString();
    res.append('Set-Cookie', cookie).set('cache-control', 'no-store').redirect(302, authorize.toString());
  };
}
