import type { Request, Response } from 'express';
import { OAuthStateError } from '../../../src/auth/oauth-state.js';
import {
  adminInstalledPath,
  type InstalledFacts,
  sendOAuthPage,
  waitingForApprovalPage,
} from '../../../src/crm/oauth-page.js';
import { isLetIn } from '../../../src/installations/let-in.js';
import { type Installation, installationId } from '../../../src/installations/store.js';
import { redactSecrets } from '../../../src/log.js';
import { HubSpotOAuthError } from '../errors.js';
import { HUBSPOT_KIND } from '../provider.js';
import {
  type HubSpotOAuthRouterDeps,
  hubspotRedirectUri,
  oauthClientOf,
  sendProblemPage,
} from './oauth-flow.js';
import {
  exchangeHubSpotCode,
  type HubSpotOAuthClientConfig,
  introspectHubSpotToken,
} from './oauth-tokens.js';
import { readHubSpotAccount } from './token-install.js';

/**
 * `GET /oauth/hubspot/callback`: checks the state and cookie, exchanges the code (date-versioned token
 * endpoint), stores the installation with sealed tokens, hands it to `onInstalled` and sends the admin to
 * `/admin?installed=<id>`. The state is checked before anything else is looked at, and every page shows fixed
 * text only: nothing from the query string (error_description, …) or from an upstream error reaches the page.
 * A step that fails has already answered and returns null, which ends the request.
 */
export function callbackRoute(deps: HubSpotOAuthRouterDeps) {
  const oauth = oauthClientOf(deps);
  return async (req: Request, res: Response): Promise<void> => {
    if (!spendState(deps, req, res)) return;
    const code = grantedCode(deps, req, res);
    if (!code) return;
    const installed = await installPortal(deps, oauth, res, code);
    if (!installed) return;
    await finishInstall(deps, res, installed);
  };
}

interface InstalledPortal {
  installation: Installation;
  facts: InstalledFacts;
}

const WHERE_SCORES_SHOW = "report scores appear on the portal's companies (property group report_scores)";

function spendState(deps: HubSpotOAuthRouterDeps, req: Request, res: Response): boolean {
  // Whatever happens next, the state was spent: the browser forgets its half.
  res.append('Set-Cookie', deps.states.clearedCookie('hubspot'));
  try {
    deps.states.consume('hubspot', req.query.state, req.get('cookie'));
    return true;
  } catch (err) {
    if (!(err instanceof OAuthStateError)) throw err;
    sendProblemPage(deps, res, 400, 'Install link not valid', `${capitalize(err.message)}.`, true);
    return false;
  }
}

/** The authorization code; answers and returns null when consent was not given or no code came. */
function grantedCode(deps: HubSpotOAuthRouterDeps, req: Request, res: Response): string | null {
  const error = text(req.query.error);
  if (error) {
    deps.logger?.info({ error: error.slice(0, 100) }, 'HubSpot install ended without consent');
    sendProblemPage(
      deps,
      res,
      400,
      'HubSpot did not connect',
      'HubSpot ended the install without connecting the app (access was declined or refused). Nothing was installed; start the install again to retry.',
      true,
    );
    return null;
  }
  const code = text(req.query.code);
  if (!code) {
    sendProblemPage(
      deps,
      res,
      400,
      'Install incomplete',
      'HubSpot sent no authorization code. Start the install again.',
      true,
    );
    return null;
  }
  return code;
}

/** The code exchanged and the portal's installation stored; answers and returns null on any failure. */
async function installPortal(
  deps: HubSpotOAuthRouterDeps,
  oauth: HubSpotOAuthClientConfig,
  res: Response,
  code: string,
): Promise<InstalledPortal | null> {
  try {
    const installed = await storePortal(deps, oauth, code);
    if (!installed) {
      sendProblemPage(
        deps,
        res,
        502,
        'Install failed',
        'HubSpot did not say which portal the app was installed in. Start the install again.',
        true,
      );
    }
    return installed;
  } catch (err) {
    if (err instanceof HubSpotOAuthError && err.refused) {
      deps.logger?.warn({ err }, 'HubSpot refused the authorization code');
      sendProblemPage(
        deps,
        res,
        400,
        'HubSpot refused the install',
        'HubSpot did not accept the authorization code (it may have expired or been used already). Start the install again.',
        true,
      );
      return null;
    }
    deps.logger?.error({ err }, 'HubSpot callback: token exchange or storage failed');
    sendProblemPage(
      deps,
      res,
      502,
      'Install failed',
      'The install could not be completed. Try the install again in a minute.',
      true,
    );
    return null;
  }
}

/** Exchange, introspect, upsert; null when HubSpot does not say which portal the tokens belong to. */
async function storePortal(
  deps: HubSpotOAuthRouterDeps,
  oauth: HubSpotOAuthClientConfig,
  code: string,
): Promise<InstalledPortal | null> {
  const grant = await exchangeHubSpotCode(oauth, code, hubspotRedirectUri(deps.appUrl));
  // Who installed it and in which portal: shown to the operator who approves it.
  const info = await introspectHubSpotToken(oauth, grant.tokens.accessToken);
  const hubId = grant.hubId ?? info.hubId;
  if (!hubId) return null;
  // The portal's time zone, for the daily-limit reset; an install does not fail for want of it.
  const timeZone = await readHubSpotAccount({ ...oauth, accessToken: grant.tokens.accessToken }).then(
    (account) => account.timeZone,
    (err: unknown) => {
      deps.logger?.warn({ err }, 'HubSpot callback: account details unreadable; daily resets assume UTC');
      return undefined;
    },
  );
  const before = await deps.installations.get(installationId(HUBSPOT_KIND, hubId));
  const installation = await deps.installations.upsert({
    crm: HUBSPOT_KIND,
    externalId: hubId,
    mode: 'oauth',
    tokens: grant.tokens,
    ...(timeZone ? { timeZone } : {}),
    ...(info.user ? { installedBy: info.user } : {}),
    ...(info.hubDomain ? { accountName: info.hubDomain } : {}),
  });
  const facts: InstalledFacts = {
    crmLabel: 'HubSpot',
    accountNoun: 'portal',
    account: info.hubDomain ? `${info.hubDomain} (${hubId})` : hubId,
    installationId: installation.id,
    whereScoresShow: WHERE_SCORES_SHOW,
    reconnected: before !== null,
  };
  return { installation, facts };
}

/** The post-install setup, then the admin (or, for an install waiting for the operator, a page saying so). */
async function finishInstall(
  deps: HubSpotOAuthRouterDeps,
  res: Response,
  { installation, facts }: InstalledPortal,
): Promise<void> {
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
    sendProblemPage(
      deps,
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
}

function text(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
