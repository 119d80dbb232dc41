import type { Request, Response } from 'express';
import type { OAuthStateStore } from '../../../src/auth/oauth-state.js';
import {
  notConfiguredPage,
  type OAuthNextStep,
  type OAuthPageRenderer,
  sendNotConfigured,
  sendOAuthPage,
} from '../../../src/crm/oauth-page.js';
import type { Installation, InstallationStore } from '../../../src/installations/store.js';
import type { Logger } from '../../../src/log.js';
import type { SalesforceSettings } from '../config.js';
import { appCredentials, NoSalesforceAppError } from '../connections/app-credentials.js';
import {
  ConnectionNotFoundError,
  type SalesforceAppCredentials,
  type SalesforceConnectionStore,
} from '../connections/connections.js';
import { type SalesforceHostPolicy, SalesforceHostRefusedError } from '../hosts.js';
import { SalesforceAnswerError } from './bounded-http.js';
import type { IdentityNotConfirmedError } from './identity.js';

/**
 * What the OAuth routes (install-route.ts, callback-route.ts) share: their dependencies, the host policy, the
 * flow's two URLs, and the result pages every failure ends on.
 */

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

export interface SalesforceOAuthContext {
  deps: SalesforceOAuthDeps;
  policy: SalesforceHostPolicy;
  /** The callback URL Salesforce sends the admin back to. */
  redirectUri: string;
  /** The install link of the global app; a connection's adds `?connection=<id>`. */
  installBase: string;
}

/** The install link for a connection (or the global app), to start again from. */
export function installLinkFor(ctx: SalesforceOAuthContext, connectionId: string | undefined): string {
  return connectionId ? `${ctx.installBase}?connection=${encodeURIComponent(connectionId)}` : ctx.installBase;
}

export function startAgain(link: string): OAuthNextStep[] {
  return [{ href: link, label: 'Start the install again' }];
}

export function sendPage(
  ctx: SalesforceOAuthContext,
  res: Response,
  status: number,
  title: string,
  paragraphs: string[],
  next: OAuthNextStep[] = [{ href: '/admin', label: 'Open the admin page' }],
): void {
  sendOAuthPage(
    res,
    { status, tone: status >= 400 ? 'problem' : 'done', title, paragraphs, next },
    ctx.deps.renderPage,
  );
}

/** The variables of the global app that are not set. */
function missingVariables(config: SalesforceSettings): string[] {
  return [
    ...(config.salesforce.clientId ? [] : ['SALESFORCE_CLIENT_ID']),
    ...(config.salesforce.clientSecret ? [] : ['SALESFORCE_CLIENT_SECRET']),
  ];
}

export function sendSalesforceNotConfigured(ctx: SalesforceOAuthContext, req: Request, res: Response): void {
  const missing = missingVariables(ctx.deps.config);
  sendNotConfigured(
    req,
    res,
    notConfiguredPage({
      crmLabel: 'Salesforce',
      missing,
      explain: `They are the consumer key and secret of the Report Connector External Client App (manifests/salesforce), whose callback URL must be ${ctx.redirectUri}.`,
      otherwise:
        "An org can also be installed through a Salesforce connection's own install link (the admin API's /admin/api/salesforce/connections), or connected without OAuth with SALESFORCE_INSTANCE_URL and SALESFORCE_ACCESS_TOKEN.",
    }),
    missing,
    ctx.deps.renderPage,
  );
}

export function sendUnknownConnection(ctx: SalesforceOAuthContext, res: Response): void {
  sendPage(ctx, res, 404, 'This install link is not valid', [
    "The Salesforce connection it names does not exist (it may have been removed). Ask the app's operator for a current install link.",
  ]);
}

/** The app for a connection id from the link or the state; answers and returns null when there is none. */
export async function appFor(
  ctx: SalesforceOAuthContext,
  req: Request,
  res: Response,
  connectionId: string | undefined,
): Promise<SalesforceAppCredentials | null> {
  try {
    return await appCredentials(ctx.deps.config, ctx.deps.connections, connectionId);
  } catch (err) {
    if (err instanceof ConnectionNotFoundError) sendUnknownConnection(ctx, res);
    else if (err instanceof NoSalesforceAppError) sendSalesforceNotConfigured(ctx, req, res);
    else throw err;
    return null;
  }
}

/**
 * Fixed words for a refused token answer: the answer's URLs are the answering server's text, and a result page
 * never shows such text (the log has the details).
 */
export function refusalWords(
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

export function queryString(req: Request, name: string): string | undefined {
  const v = req.query[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
}
