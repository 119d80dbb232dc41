import { type Request, type Response, Router } from 'express';
import { OAuthStateError, type OAuthStateStore } from '../../src/auth/oauth-state.js';
import { isLetIn } from '../../src/installations/let-in.js';
import type { Installation, InstallationStore } from '../../src/installations/store.js';
import type { Logger } from '../../src/log.js';
import { appCredentials, globalAppCredentials, NoSalesforceAppError } from './app-credentials.js';
import type { SalesforceSettings } from './config.js';
import {
  ConnectionNotFoundError,
  connectionIdSchema,
  type SalesforceAppCredentials,
  type SalesforceConnectionStore,
} from './connections.js';
import {
  parseIdentityUrl,
  type SalesforceTokenResponse,
  tokenResponseSchema,
  verifyTokenSignature,
} from './identity.js';
import { exchangeAuthorizationCode } from './oauth-client.js';
import { refusalPage } from './oauth-refusals.js';
import { createPkcePair } from './pkce.js';
import { OAUTH_PATHS, OAUTH_SCOPES, SALESFORCE_KIND, SALESFORCE_PROVIDER } from './provider.js';

/**
 * The OAuth 2.0 web server flow with PKCE. `/install` makes a code verifier (pkce.ts), seals it into the
 * browser's state cookie (never in the URL, never stored server-side), and sends the admin to Salesforce with the
 * S256 challenge. `/install?connection=<id>` signs in through that Salesforce connection's External Client App
 * instead of the global one (SALESFORCE_CLIENT_ID); the connection id rides in the sealed state too, and the
 * installation records it, so refresh and revoke use the same app. `/callback` consumes the state, trades the code and verifier for tokens, checks the token
 * response's signature, reads the org and integration user from the identity URL and stores the installation
 * (tokens sealed by the InstallationStore). Every failure ends on a page that says what happened and what to do.
 */

export const SALESFORCE_OAUTH_ROUTES = {
  install: '/oauth/salesforce/install',
  callback: '/oauth/salesforce/callback',
} as const;

export interface SalesforceOAuthDeps {
  config: SalesforceSettings & { appUrl: string };
  states: OAuthStateStore;
  store: InstallationStore;
  /** The operator's Salesforce connections; without it only the global app can be used. */
  connections?: SalesforceConnectionStore;
  /** Runs after the installation is stored (create fields, start the backfill); a failure is shown to the admin. */
  onInstalled: (installation: Installation) => Promise<void>;
  logger: Logger;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(res: Response, status: number, title: string, paragraphs: string[]): void {
  const body = paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join('\n');
  res
    .status(status)
    .type('html')
    .set('cache-control', 'no-store')
    .send(
      `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>\n` +
        `<body><h1>${escapeHtml(title)}</h1>\n${body}\n</body></html>\n`,
    );
}

function queryString(req: Request, name: string): string | undefined {
  const v = req.query[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

export function createSalesforceOAuthRouter(deps: SalesforceOAuthDeps): Router {
  const router = Router();
  const redirectUri = `${deps.config.appUrl}${SALESFORCE_OAUTH_ROUTES.callback}`;
  const installBase = `${deps.config.appUrl}${SALESFORCE_OAUTH_ROUTES.install}`;
  const linkFor = (connectionId: string | undefined) =>
    connectionId ? `${installBase}?connection=${encodeURIComponent(connectionId)}` : installBase;

  const notConfigured = (res: Response) =>
    page(res, 503, 'Salesforce is not configured', [
      'This app has no Salesforce External Client App yet: set SALESFORCE_CLIENT_ID and SALESFORCE_CLIENT_SECRET ' +
        `(the app's consumer key and secret, with callback URL ${redirectUri}) and restart it, or install through ` +
        "a Salesforce connection's link from the operator.",
    ]);
  const unknownConnection = (res: Response) =>
    page(res, 404, 'This install link is not valid', [
      "The Salesforce connection it names does not exist (it may have been removed). Ask the app's operator for a current install link.",
    ]);

  /** The app for a connection id from the link or the state; answers and returns null when there is none. */
  const appFor = async (
    res: Response,
    connectionId: string | undefined,
  ): Promise<SalesforceAppCredentials | null> => {
    try {
      return await appCredentials(deps.config, deps.connections, connectionId);
    } catch (err) {
      if (err instanceof ConnectionNotFoundError) unknownConnection(res);
      else if (err instanceof NoSalesforceAppError) notConfigured(res);
      else throw err;
      return null;
    }
  };

  router.get(SALESFORCE_OAUTH_ROUTES.install, async (req, res) => {
    const named = queryString(req, 'connection');
    const parsed = named === undefined ? undefined : connectionIdSchema.safeParse(named);
    if (parsed && !parsed.success) return unknownConnection(res);
    const connectionId = parsed?.data;
    const app = await appFor(res, connectionId);
    if (!app) return;
    const pkce = createPkcePair();
    // The verifier (and the connection) are sealed into the browser's state cookie: nothing is stored
    // (see auth/oauth-state.ts).
    const { state, cookie } = deps.states.issue(SALESFORCE_PROVIDER, {
      codeVerifier: pkce.verifier,
      ...(connectionId ? { connectionId } : {}),
    });
    const authorize = new URL(`${app.loginUrl.replace(/\/+$/, '')}${OAUTH_PATHS.authorize}`);
    authorize.search = new URLSearchParams({
      response_type: 'code',
      client_id: app.clientId,
      redirect_uri: redirectUri,
      scope: OAUTH_SCOPES.join(' '),
      state,
      code_challenge: pkce.challenge,
      code_challenge_method: pkce.method,
    }).toString();
    res.append('Set-Cookie', cookie).set('cache-control', 'no-store').redirect(302, authorize.toString());
  });

  router.get(SALESFORCE_OAUTH_ROUTES.callback, async (req, res) => {
    // Whatever happens next, the state was spent: the browser forgets its half.
    res.append('Set-Cookie', deps.states.clearedCookie(SALESFORCE_PROVIDER));
    let data: Record<string, string>;
    try {
      data = deps.states.consume(SALESFORCE_PROVIDER, req.query.state, req.get('cookie'));
    } catch (err) {
      if (!(err instanceof OAuthStateError)) throw err;
      if (!globalAppCredentials(deps.config) && !deps.connections) return notConfigured(res);
      deps.logger.warn({ reason: err.reason }, 'salesforce callback with a bad state');
      return page(res, 400, 'This install link is not valid', [
        `${err.message}.`,
        `Start again at ${installBase}.`,
      ]);
    }
    const connectionId = data.connectionId || undefined;
    const installLink = linkFor(connectionId);
    const app = await appFor(res, connectionId);
    if (!app) return;

    const denied = queryString(req, 'error');
    if (denied) {
      // Fixed text only: the query string is never echoed (see oauth-refusals.ts).
      const refusal = refusalPage(denied, queryString(req, 'error_description'));
      deps.logger.info({ refusal: refusal.kind }, 'salesforce install was not approved');
      return page(res, 403, refusal.title, [
        ...refusal.lines,
        `When that is done, start again at ${installLink}.`,
      ]);
    }

    const code = queryString(req, 'code');
    const codeVerifier = data.codeVerifier;
    if (!code || !codeVerifier) {
      return page(res, 400, 'This install link is not valid', [
        'Salesforce sent no authorization code.',
        `Start again at ${installLink}.`,
      ]);
    }

    let tokens: SalesforceTokenResponse;
    try {
      tokens = tokenResponseSchema.parse(
        await exchangeAuthorizationCode(app, { code, codeVerifier, redirectUri }),
      );
    } catch (err) {
      deps.logger.warn({ err }, 'salesforce token exchange failed');
      return page(res, 502, 'Salesforce did not complete the install', [
        'Exchanging the authorization code failed: Salesforce did not accept it (it may have expired or been used already).',
        `Start again at ${installLink}.`,
      ]);
    }

    if (!verifyTokenSignature(tokens, app.clientSecret)) {
      deps.logger.warn('salesforce token response signature did not verify');
      return page(res, 502, 'Salesforce did not complete the install', [
        'The token response from Salesforce failed its signature check, so it was not trusted.',
        `Check the consumer secret (${connectionId ? `connection ${connectionId}` : 'SALESFORCE_CLIENT_SECRET'}) and start again at ${installLink}.`,
      ]);
    }

    const identity = parseIdentityUrl(tokens.id);
    let installation: Installation;
    try {
      installation = await deps.store.upsert({
        crm: SALESFORCE_KIND,
        externalId: identity.orgId,
        mode: 'oauth',
        tokens: {
          accessToken: tokens.access_token,
          ...(tokens.refresh_token ? { refreshToken: tokens.refresh_token } : {}),
        },
        instanceUrl: tokens.instance_url,
        installedBy: identity.userId,
        ...(connectionId ? { connectionId } : {}),
      });
    } catch (err) {
      deps.logger.error({ err, org: identity.orgId }, 'salesforce install: could not store the installation');
      return page(res, 503, 'Install could not finish', [
        'Salesforce approved the install, but the app could not save it (its Redis is unavailable).',
        `Try again at ${installLink} in a minute.`,
      ]);
    }
    deps.logger.info(
      { installation: installation.id, org: identity.orgId, user: identity.userId, connection: connectionId },
      'salesforce org connected',
    );

    const notes: string[] = [];
    if (!tokens.refresh_token) {
      notes.push(
        'Salesforce issued no refresh token, so the connection ends when this session expires: allow the ' +
          '"refresh_token, offline_access" scope in the External Client App and install again.',
      );
    }
    try {
      await deps.onInstalled(installation);
    } catch (err) {
      deps.logger.error({ err, installation: installation.id }, 'salesforce post-install setup failed');
      return page(res, 500, 'Connected, but setup did not finish', [
        `The Salesforce org ${identity.orgId} is connected, but setting it up failed. The details are in the app's log.`,
        `Fix the cause and install again at ${installLink}; installing again is safe.`,
      ]);
    }
    const saved = await deps.store.get(installation.id);
    if (saved && !isLetIn(saved)) {
      return page(res, 200, 'Installed: waiting for approval', [
        `The app is installed in the Salesforce org ${identity.orgId}. It starts once the app's operator approves the installation; until then it reads and writes nothing.`,
        ...notes,
      ]);
    }
    page(res, 200, 'Salesforce is connected', [
      `The Salesforce org ${identity.orgId} (${tokens.instance_url}) is connected. Report scores will appear on its Accounts.`,
      ...notes,
    ]);
  });

  return router;
}
