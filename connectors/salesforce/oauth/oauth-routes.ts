import { type Request, type Response, Router } from 'express';
import { OAuthStateError, type OAuthStateStore } from '../../../src/auth/oauth-state.js';
import {
  connectedPage,
  type InstalledFacts,
  notConfiguredPage,
  type OAuthNextStep,
  type OAuthPageRenderer,
  sendNotConfigured,
  sendOAuthPage,
  waitingForApprovalPage,
} from '../../../src/crm/oauth-page.js';
import { isLetIn } from '../../../src/installations/let-in.js';
import {
  type Installation,
  type InstallationStore,
  installationId,
} from '../../../src/installations/store.js';
import type { Logger } from '../../../src/log.js';
import type { SalesforceSettings } from '../config.js';
import {
  appCredentials,
  globalAppCredentials,
  NoSalesforceAppError,
} from '../connections/app-credentials.js';
import {
  ConnectionNotFoundError,
  connectionIdSchema,
  type SalesforceAppCredentials,
  type SalesforceConnectionStore,
} from '../connections/connections.js';
import { hostPolicyOf, requireSalesforceHost, SalesforceHostRefusedError } from '../hosts.js';
import { OAUTH_PATHS, OAUTH_SCOPES, SALESFORCE_KIND, SALESFORCE_PROVIDER } from '../provider.js';
import { SalesforceAnswerError } from './bounded-http.js';
import {
  confirmIdentity,
  IdentityNotConfirmedError,
  type SalesforceIdentity,
  type SalesforceTokenResponse,
  tokenResponseSchema,
  verifyTokenSignature,
} from './identity.js';
import { exchangeAuthorizationCode } from './oauth-client.js';
import { refusalPage } from './oauth-refusals.js';
import { createPkcePair } from './pkce.js';

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
 * happened and what to do.
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
  /** The result pages' look (the admin's, from the server); plain HTML without it. */
  renderPage?: OAuthPageRenderer;
}

const WHERE_SCORES_SHOW =
  "report scores appear on its Accounts (the Report Connector fields; users see them once a Salesforce admin assigns the app's permission sets)";

/** The variables of the global app that are not set. */
function missingVariables(config: SalesforceSettings): string[] {
  return [
    ...(config.salesforce.clientId ? [] : ['SALESFORCE_CLIENT_ID']),
    ...(config.salesforce.clientSecret ? [] : ['SALESFORCE_CLIENT_SECRET']),
  ];
}

/**
 * Fixed words for a refused token answer: the answer's URLs are the answering server's text, and a result page
 * never shows such text (the log has the details).
 */
function refusalWords(
  err: SalesforceHostRefusedError | SalesforceAnswerError | IdentityNotConfirmedError,
): string {
  if (err instanceof SalesforceHostRefusedError) {
    return `the ${err.role} in the answer is not a Salesforce host (${err.code})`;
  }
  if (err instanceof SalesforceAnswerError) {
    return err.code === 'SALESFORCE_REDIRECT_REFUSED'
      ? `the answer was a redirect, which is not followed (${err.code})`
      : `the answer was larger than Salesforce's answers are (${err.code})`;
  }
  return `Salesforce's identity service did not confirm the org of the new token (${err.code})`;
}

function queryString(req: Request, name: string): string | undefined {
  const v = req.query[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

export function createSalesforceOAuthRouter(deps: SalesforceOAuthDeps): Router {
  const router = Router();
  const policy = hostPolicyOf(deps.config);
  const redirectUri = `${deps.config.appUrl}${SALESFORCE_OAUTH_ROUTES.callback}`;
  const installBase = `${deps.config.appUrl}${SALESFORCE_OAUTH_ROUTES.install}`;
  const linkFor = (connectionId: string | undefined) =>
    connectionId ? `${installBase}?connection=${encodeURIComponent(connectionId)}` : installBase;
  const again = (link: string): OAuthNextStep[] => [{ href: link, label: 'Start the install again' }];
  const page = (
    res: Response,
    status: number,
    title: string,
    paragraphs: string[],
    next: OAuthNextStep[] = [{ href: '/admin', label: 'Open the admin page' }],
  ) =>
    sendOAuthPage(
      res,
      { status, tone: status >= 400 ? 'problem' : 'done', title, paragraphs, next },
      deps.renderPage,
    );

  const notConfigured = (req: Request, res: Response) => {
    const missing = missingVariables(deps.config);
    sendNotConfigured(
      req,
      res,
      notConfiguredPage({
        crmLabel: 'Salesforce',
        missing,
        explain: `They are the consumer key and secret of the Report Connector External Client App (manifests/salesforce), whose callback URL must be ${redirectUri}.`,
        otherwise:
          "An org can also be installed through a Salesforce connection's own install link (the admin API's /admin/api/salesforce/connections), or connected without OAuth with SALESFORCE_INSTANCE_URL and SALESFORCE_ACCESS_TOKEN.",
      }),
      missing,
      deps.renderPage,
    );
  };
  const unknownConnection = (res: Response) =>
    page(res, 404, 'This install link is not valid', [
      "The Salesforce connection it names does not exist (it may have been removed). Ask the app's operator for a current install link.",
    ]);

  /** The app for a connection id from the link or the state; answers and returns null when there is none. */
  const appFor = async (
    req: Request,
    res: Response,
    connectionId: string | undefined,
  ): Promise<SalesforceAppCredentials | null> => {
    try {
      return await appCredentials(deps.config, deps.connections, connectionId);
    } catch (err) {
      if (err instanceof ConnectionNotFoundError) unknownConnection(res);
      else if (err instanceof NoSalesforceAppError) notConfigured(req, res);
      else throw err;
      return null;
    }
  };

  router.get(SALESFORCE_OAUTH_ROUTES.install, async (req, res) => {
    const named = queryString(req, 'connection');
    const parsed = named === undefined ? undefined : connectionIdSchema.safeParse(named);
    if (parsed && !parsed.success) return unknownConnection(res);
    const connectionId = parsed?.data;
    const app = await appFor(req, res, connectionId);
    if (!app) return;
    try {
      requireSalesforceHost(app.loginUrl, policy, 'login URL');
    } catch (err) {
      if (!(err instanceof SalesforceHostRefusedError)) throw err;
      deps.logger.warn(
        { connection: connectionId, code: err.code },
        'salesforce install refused: login host',
      );
      return page(res, 400, 'This install link cannot be used', [
        `${err.message}.`,
        "Ask the app's operator for an install link whose login URL is Salesforce's.",
      ]);
    }
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
      if (!globalAppCredentials(deps.config) && !deps.connections) return notConfigured(req, res);
      deps.logger.warn({ reason: err.reason }, 'salesforce callback with a bad state');
      return page(res, 400, 'This install link is not valid', [`${err.message}.`], again(installBase));
    }
    const connectionId = data.connectionId || undefined;
    const installLink = linkFor(connectionId);
    const app = await appFor(req, res, connectionId);
    if (!app) return;

    const denied = queryString(req, 'error');
    if (denied) {
      // Fixed text only: the query string is never echoed (see oauth-refusals.ts).
      const refusal = refusalPage(denied, queryString(req, 'error_description'));
      deps.logger.info({ refusal: refusal.kind }, 'salesforce install was not approved');
      return page(
        res,
        403,
        refusal.title,
        [...refusal.lines, 'When that is done, start the install again.'],
        again(installLink),
      );
    }

    const code = queryString(req, 'code');
    const codeVerifier = data.codeVerifier;
    if (!code || !codeVerifier) {
      return page(
        res,
        400,
        'This install link is not valid',
        ['Salesforce sent no authorization code.'],
        again(installLink),
      );
    }

    let tokens: SalesforceTokenResponse;
    try {
      tokens = tokenResponseSchema.parse(
        await exchangeAuthorizationCode(app, { code, codeVerifier, redirectUri }, policy),
      );
    } catch (err) {
      deps.logger.warn({ err }, 'salesforce token exchange failed');
      if (err instanceof SalesforceHostRefusedError || err instanceof SalesforceAnswerError) {
        return page(
          res,
          502,
          'Salesforce did not complete the install',
          [`Nothing was stored: ${refusalWords(err)}.`],
          again(installLink),
        );
      }
      return page(
        res,
        502,
        'Salesforce did not complete the install',
        [
          'Exchanging the authorization code failed: Salesforce did not accept it (it may have expired or been used already).',
        ],
        again(installLink),
      );
    }

    if (!verifyTokenSignature(tokens, app.clientSecret)) {
      deps.logger.warn('salesforce token response signature did not verify');
      return page(
        res,
        502,
        'Salesforce did not complete the install',
        [
          'The token response from Salesforce failed its signature check, so it was not trusted.',
          `Check the consumer secret (${connectionId ? `connection ${connectionId}` : 'SALESFORCE_CLIENT_SECRET'}) and start the install again.`,
        ],
        again(installLink),
      );
    }

    let identity: SalesforceIdentity;
    try {
      requireSalesforceHost(tokens.instance_url, policy, 'instance URL');
      identity = await confirmIdentity(tokens.id, tokens.access_token, policy);
    } catch (err) {
      if (
        !(err instanceof SalesforceHostRefusedError) &&
        !(err instanceof IdentityNotConfirmedError) &&
        !(err instanceof SalesforceAnswerError)
      ) {
        throw err;
      }
      deps.logger.warn(
        { code: err.code, connection: connectionId },
        `salesforce install refused: ${err.message}`,
      );
      return page(
        res,
        502,
        'Salesforce did not complete the install',
        [
          `The org of the new token could not be confirmed with Salesforce, so nothing was stored: ${refusalWords(err)}.`,
          'Start the install again; if it fails again, tell the operator of this app.',
        ],
        again(installLink),
      );
    }
    if (connectionId && deps.connections) {
      const bound = await deps.connections.bindOrg(connectionId, identity.orgId);
      if (bound === null) return unknownConnection(res);
      if (bound.slice(0, 15) !== identity.orgId.slice(0, 15)) {
        deps.logger.warn(
          {
            connection: connectionId,
            boundTo: bound,
            org: identity.orgId,
            code: 'SALESFORCE_CONNECTION_OTHER_ORG',
          },
          'salesforce install refused: the connection belongs to another org',
        );
        return page(res, 403, 'This install link belongs to another org', [
          `The Salesforce connection ${connectionId} was installed in the org ${bound}; it cannot install the org ${identity.orgId}. Nothing was stored.`,
          "Ask the app's operator for the install link of your org's own connection.",
        ]);
      }
    }
    let installation: Installation;
    let reconnected: boolean;
    try {
      reconnected = (await deps.store.get(installationId(SALESFORCE_KIND, identity.orgId))) !== null;
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
      return page(
        res,
        503,
        'Install could not finish',
        [
          'Salesforce approved the install, but the app could not save it (its Redis is unavailable).',
          'Start the install again in a minute.',
        ],
        again(installLink),
      );
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
      return page(
        res,
        500,
        'Connected, but setup did not finish',
        [
          `The Salesforce org ${identity.orgId} is connected, but setting it up failed. The details are in the app's log.`,
          'Fix the cause and install again; installing again is safe.',
        ],
        [...again(installLink), { href: '/admin', label: 'Open the admin page' }],
      );
    }
    const facts: InstalledFacts = {
      crmLabel: 'Salesforce',
      accountNoun: 'org',
      account: `${identity.orgId} (${tokens.instance_url})`,
      installationId: installation.id,
      whereScoresShow: WHERE_SCORES_SHOW,
      reconnected,
    };
    const saved = await deps.store.get(installation.id);
    const result =
      saved && !isLetIn(saved) ? waitingForApprovalPage(facts, notes) : connectedPage(facts, notes);
    sendOAuthPage(res, result, deps.renderPage);
  });

  return router;
}
