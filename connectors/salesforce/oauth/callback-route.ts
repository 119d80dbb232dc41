import type { Request, Response } from 'express';
import { OAuthStateError } from '../../../src/auth/oauth-state.js';
import { globalAppCredentials } from '../connections/app-credentials.js';
import { SALESFORCE_PROVIDER } from '../provider.js';
import { bindConnection, confirmOrg, finishInstall, storeInstallation, tradeCode } from './callback-steps.js';
import {
  appFor,
  installLinkFor,
  queryString,
  type SalesforceOAuthContext,
  sendPage,
  sendSalesforceNotConfigured,
  startAgain,
} from './oauth-context.js';
import { refusalPage } from './oauth-refusals.js';

/**
 * `GET /oauth/salesforce/callback`: spends the state, then each step of callback-steps.ts in turn. A step that
 * fails has already answered with its page and returns null, which ends the request.
 */
export function callbackRoute(ctx: SalesforceOAuthContext) {
  return async (req: Request, res: Response): Promise<void> => {
    const data = spendState(ctx, req, res);
    if (!data) return;
    const connectionId = data.connectionId || undefined;
    const installLink = installLinkFor(ctx, connectionId);
    const app = await appFor(ctx, req, res, connectionId);
    if (!app) return;
    const code = authorizationCode(ctx, req, res, data.codeVerifier, installLink);
    if (!code) return;
    const attempt = { connectionId, installLink };
    const tokens = await tradeCode(ctx, res, app, code, attempt);
    if (!tokens) return;
    const identity = await confirmOrg(ctx, res, tokens, attempt);
    if (!identity) return;
    if (!(await bindConnection(ctx, res, identity, connectionId))) return;
    const stored = await storeInstallation(ctx, res, tokens, identity, attempt);
    if (!stored) return;
    await finishInstall(ctx, res, { ...stored, tokens, identity, installLink });
  };
}

/** The sealed state's contents; answers and returns null when the state is missing, spent or forged. */
function spendState(ctx: SalesforceOAuthContext, req: Request, res: Response): Record<string, string> | null {
  // Whatever happens next, the state was spent: the browser forgets its half.
  res.append('Set-Cookie', ctx.deps.states.clearedCookie(SALESFORCE_PROVIDER));
  try {
    return ctx.deps.states.consume(SALESFORCE_PROVIDER, req.query.state, req.get('cookie'));
  } catch (err) {
    if (!(err instanceof OAuthStateError)) throw err;
    if (!globalAppCredentials(ctx.deps.config) && !ctx.deps.connections) {
      sendSalesforceNotConfigured(ctx, req, res);
      return null;
    }
    ctx.deps.logger.warn({ reason: err.reason }, 'salesforce callback with a bad state');
    sendPage(
      ctx,
      res,
      400,
      'This install link is not valid',
      [`${err.message}.`],
      startAgain(ctx.installBase),
    );
    return null;
  }
}

/** The code and its verifier; answers and returns null when the admin refused or Salesforce sent no code. */
function authorizationCode(
  ctx: SalesforceOAuthContext,
  req: Request,
  res: Response,
  codeVerifier: string | undefined,
  installLink: string,
): { code: string; codeVerifier: string } | null {
  const denied = queryString(req, 'error');
  if (denied) {
    // Fixed text only: the query string is never echoed (see oauth-refusals.ts).
    const refusal = refusalPage(denied, queryString(req, 'error_description'));
    ctx.deps.logger.info({ refusal: refusal.kind }, 'salesforce install was not approved');
    sendPage(
      ctx,
      res,
      403,
      refusal.title,
      [...refusal.lines, 'When that is done, start the install again.'],
      startAgain(installLink),
    );
    return null;
  }
  const code = queryString(req, 'code');
  if (!code || !codeVerifier) {
    sendPage(
      ctx,
      res,
      400,
      'This install link is not valid',
      ['Salesforce sent no authorization code.'],
      startAgain(installLink),
    );
    return null;
  }
  return { code, codeVerifier };
}
