import type { Response } from 'express';
import type { OAuthStateStore } from '../../../src/auth/oauth-state.js';
import { type OAuthPage, type OAuthPageRenderer, sendOAuthPage } from '../../../src/crm/oauth-page.js';
import type { Installation, InstallationStore } from '../../../src/installations/store.js';
import type { Logger } from '../../../src/log.js';
import { HUBSPOT_NOTE_SCOPES, HUBSPOT_SCOPES, type HubSpotApiVersion } from '../provider.js';
import type { HubSpotOAuthClientConfig } from './oauth-tokens.js';

/**
 * What the OAuth routes (install-route.ts, callback-route.ts) share: their paths and dependencies, the consent
 * and redirect URLs, and the short problem page every failure ends on.
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

/** The token endpoint's client, from the router's dependencies. */
export function oauthClientOf(deps: HubSpotOAuthRouterDeps): HubSpotOAuthClientConfig {
  return {
    apiUrl: deps.apiUrl,
    clientId: deps.clientId,
    clientSecret: deps.clientSecret,
    ...(deps.apiVersion ? { apiVersion: deps.apiVersion } : {}),
  };
}

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

/** A failure's page: fixed text, and a link to start again or to the admin page. */
export function sendProblemPage(
  deps: HubSpotOAuthRouterDeps,
  res: Response,
  status: number,
  title: string,
  message: string,
  offerRetry = false,
): void {
  sendOAuthPage(res, problemPage(status, title, message, offerRetry), deps.renderPage);
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
