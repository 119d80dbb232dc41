import { type Request, type Response, Router } from 'express';
import { OAuthStateError, type OAuthStateStore } from '../../../src/auth/oauth-state.js';
import {
  adminInstalledPath,
  type InstalledFacts,
  notConfiguredPage,
  type OAuthPage,
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
import { type Logger, redactSecrets } from '../../../src/log.js';
import { HubSpotOAuthError } from '../errors.js';
import {
  ALERT_NOTES_INSTALL_PARAM,
  HUBSPOT_KIND,
  HUBSPOT_NOTE_SCOPES,
  HUBSPOT_SCOPES,
  type HubSpotApiVersion,
} from '../provider.js';
import { exchangeHubSpotCode, introspectHubSpotToken } from './oauth-tokens.js';
import { readHubSpotAccount } from './token-install.js';

/**
 * `GET /oauth/hubspot/install` sends the admin to HubSpot's consent screen with a signed state bound to the
 * browser by a cookie; `GET /oauth/hubspot/callback` checks that state and cookie, exchanges the code (date-versioned token endpoint), stores the
 * installation with sealed tokens, hands it to `onInstalled` and sends the admin to `/admin?installed=<id>`.
 * Every failure is a short page saying what happened and what to do; no stack trace reaches the browser.
 * A CRM admin who is not the connector's operator lands on the admin's login after a let-in install: the login
 * says why (page-routes.ts, `installed=`).
 */

export const HUBSPOT_INSTALL_PATH = '/oauth/hubspot/install';
export const HUBSPOT_CALLBACK_PATH = '/oauth/hubspot/callback';

export interface HubSpotOAuthRouterDeps {
  clientId: string;
  clientSecret: string;
  /** `APP_URL`: the redirect URI is `${appUrl}/oauth/hubspot/callback`. */
  appUrl: string;
  /** `HUBSPOT_API_URL` (token endpoint). */
  apiUrl: string;
  /** `HUBSPOT_API_VERSION`. */
  apiVersion?: HubSpotApiVersion;
  /** `config.hubspot.authorizeUrl`. */
  authorizeUrl: string;
  states: OAuthStateStore;
  installations: InstallationStore;
  /** The lead's code: create the fields, start the backfill. */
  onInstalled: (installation: Installation) => Promise<void>;
  logger?: Logger;
  /** The result pages' look (the admin's, from the server); plain HTML without it. */
  renderPage?: OAuthPageRenderer;
}

const WHERE_SCORES_SHOW = "report scores appear on the portal's companies (property group report_scores)";

export function hubspotRedirectUri(appUrl: string): string {
  return `${appUrl.replace(/\/+$/, '')}${HUBSPOT_CALLBACK_PATH}`;
}

/** The consent URL. Built by hand so spaces in `scope` are %20 as in HubSpot's docs, not form-style `+`. */
export function hubspotAuthorizeUrl(
  deps: Pick<HubSpotOAuthRouterDeps, 'authorizeUrl' | 'clientId' | 'appUrl'>,
  state: string,
  options: { alertNotes?: boolean } = {},
): string {
  const params: [string, string][] = [
    ['client_id', deps.clientId],
    ['redirect_uri', hubspotRedirectUri(deps.appUrl)],
    ['scope', HUBSPOT_SCOPES.join(' ')],
    // Asked for only by an installation that switched alert notes on: a portal may refuse it and still install.
    ...(options.alertNotes
      ? ([['optional_scope', HUBSPOT_NOTE_SCOPES.join(' ')]] as [string, string][])
      : []),
    ['state', state],
  ];
  const query = params.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
  return `${deps.authorizeUrl}${deps.authorizeUrl.includes('?') ? '&' : '?'}${query}`;
}

export function createHubSpotOAuthRouter(deps: HubSpotOAuthRouterDeps): Router {
  const router = Router();
  const page = (res: Response, status: number, title: string, message: string, offerRetry = false): void =>
    sendOAuthPage(res, problemPage(status, title, message, offerRetry), deps.renderPage);
  const oauth = {
    apiUrl: deps.apiUrl,
    clientId: deps.clientId,
    clientSecret: deps.clientSecret,
    ...(deps.apiVersion ? { apiVersion: deps.apiVersion } : {}),
  };

  // Nothing is stored: the state's private half travels in the browser's cookie (see auth/oauth-state.ts).
  router.get(HUBSPOT_INSTALL_PATH, (req: Request, res: Response) => {
    const { state, cookie } = deps.states.issue('hubspot');
    res
      .append('Set-Cookie', cookie)
      .set('cache-control', 'no-store')
      .redirect(
        302,
        hubspotAuthorizeUrl(deps, state, { alertNotes: req.query[ALERT_NOTES_INSTALL_PARAM] === '1' }),
      );
  });

  // The state is checked before anything else is looked at, and every page shows fixed text only: nothing
  // from the query string (error_description, …) or from an upstream error reaches the page.
  router.get(HUBSPOT_CALLBACK_PATH, async (req: Request, res: Response) => {
    const q = req.query;
    // Whatever happens next, the state was spent: the browser forgets its half.
    res.append('Set-Cookie', deps.states.clearedCookie('hubspot'));
    try {
      deps.states.consume('hubspot', q.state, req.get('cookie'));
    } catch (err) {
      if (!(err instanceof OAuthStateError)) throw err;
      page(res, 400, 'Install link not valid', `${capitalize(err.message)}.`, true);
      return;
    }

    if (text(q.error)) {
      deps.logger?.info({ error: text(q.error)?.slice(0, 100) }, 'HubSpot install ended without consent');
      page(
        res,
        400,
        'HubSpot did not connect',
        'HubSpot ended the install without connecting the app (access was declined or refused). Nothing was installed; start the install again to retry.',
        true,
      );
      return;
    }

    const code = text(q.code);
    if (!code) {
      page(
        res,
        400,
        'Install incomplete',
        'HubSpot sent no authorization code. Start the install again.',
        true,
      );
      return;
    }

    let installation: Installation;
    let facts: InstalledFacts;
    try {
      const grant = await exchangeHubSpotCode(oauth, code, hubspotRedirectUri(deps.appUrl));
      // Who installed it and in which portal: shown to the operator who approves it.
      const info = await introspectHubSpotToken(oauth, grant.tokens.accessToken);
      const hubId = grant.hubId ?? info.hubId;
      if (!hubId) {
        page(
          res,
          502,
          'Install failed',
          'HubSpot did not say which portal the app was installed in. Start the install again.',
          true,
        );
        return;
      }
      // The portal's time zone, for the daily-limit reset; an install does not fail for want of it.
      const timeZone = await readHubSpotAccount({ ...oauth, accessToken: grant.tokens.accessToken }).then(
        (account) => account.timeZone,
        (err: unknown) => {
          deps.logger?.warn({ err }, 'HubSpot callback: account details unreadable; daily resets assume UTC');
          return undefined;
        },
      );
      const before = await deps.installations.get(installationId(HUBSPOT_KIND, hubId));
      installation = await deps.installations.upsert({
        crm: HUBSPOT_KIND,
        externalId: hubId,
        mode: 'oauth',
        tokens: grant.tokens,
        ...(timeZone ? { timeZone } : {}),
        ...(info.user ? { installedBy: info.user } : {}),
        ...(info.hubDomain ? { accountName: info.hubDomain } : {}),
      });
      facts = {
        crmLabel: 'HubSpot',
        accountNoun: 'portal',
        account: info.hubDomain ? `${info.hubDomain} (${hubId})` : hubId,
        installationId: installation.id,
        whereScoresShow: WHERE_SCORES_SHOW,
        reconnected: before !== null,
      };
    } catch (err) {
      if (err instanceof HubSpotOAuthError && err.refused) {
        deps.logger?.warn({ err }, 'HubSpot refused the authorization code');
        page(
          res,
          400,
          'HubSpot refused the install',
          'HubSpot did not accept the authorization code (it may have expired or been used already). Start the install again.',
          true,
        );
        return;
      }
      deps.logger?.error({ err }, 'HubSpot callback: token exchange or storage failed');
      page(
        res,
        502,
        'Install failed',
        'The install could not be completed. Try the install again in a minute.',
        true,
      );
      return;
    }

    try {
      await deps.onInstalled(installation);
    } catch (err) {
      deps.logger?.error(
        {
          err: redactSecrets(err instanceof Error ? err.message : String(err)),
          installationId: installation.id,
        },
        'HubSpot install: setting up the installation failed',
      );
      page(
        res,
        500,
        'Installed, but set-up failed',
        "The app is connected to HubSpot, but setting it up failed. The details are in the app's log; open the admin page to retry.",
      );
      return;
    }
    const saved = await deps.installations.get(installation.id);
    if (saved && !isLetIn(saved)) {
      sendOAuthPage(res, waitingForApprovalPage(facts), deps.renderPage);
      return;
    }
    // An operator goes straight to the admin; anyone else sees its login, which says why (installed=).
    res.redirect(302, adminInstalledPath(facts));
  });

  return router;
}

function text(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

function problemPage(status: number, title: string, message: string, offerRetry: boolean): OAuthPage {
  return {
    status,
    tone: 'problem',
    title,
    paragraphs: [message],
    next: offerRetry
      ? [{ href: HUBSPOT_INSTALL_PATH, label: 'Start the install again' }]
      : [{ href: '/admin', label: 'Open the admin page' }],
  };
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
