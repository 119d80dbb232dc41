import express, { type Request, type Response, Router } from 'express';
import { z } from 'zod';
import { OAuthStateError, type OAuthStateStore } from '../../../src/auth/oauth-state.js';
import { RecordCardError, type RecordCardHost } from '../../../src/crm/record-card.js';
import type { Logger } from '../../../src/log.js';
import { cookieValue, serializeCookie } from '../../../src/util/cookies.js';
import { DecryptionError, type SecretBox } from '../../../src/util/secretbox.js';
import { HubSpotOAuthError } from '../errors.js';
import {
  exchangeHubSpotCode,
  type HubSpotOAuthClientConfig,
  introspectHubSpotToken,
} from '../oauth/oauth-tokens.js';
import { HUBSPOT_KIND, HUBSPOT_SCOPES } from '../provider.js';
import {
  actionsPage,
  type CardActPage,
  doneTitle,
  refusalPage,
  sendCardPage,
  signInPage,
} from './card-pages.js';
import type { CardRateLimit } from './card-rate-limit.js';
import { cardDataOf } from './card-view.js';
import { cardDecisionSchema } from './ui/card-data.js';
import {
  HUBSPOT_CARD_ACT_PATH,
  HUBSPOT_CARD_CALLBACK_PATH,
  HUBSPOT_CARD_OAUTH_PREFIX,
  HUBSPOT_CARD_SIGN_IN_PATH,
} from './ui/card-paths.js';
import { ACTION_REFUSAL_WORDS } from './ui/card-text.js';

/**
 * Where a seller's decisions and report requests from the HubSpot card are taken: a page of the connector,
 * never a `hubspot.fetch` route. HubSpot signs `hubspot.fetch` requests with the app's secret but documents no
 * portal or user it vouches for, so a URL's `portalId` and `userId` prove nothing (docs/vendor-sources.md).
 *
 * 1. `GET …/act?portalId=&companyId=` (the card opens it in HubSpot's iframe modal): a page with one link,
 *    opened in a new window, because HubSpot's sign-in is not shown inside a frame.
 * 2. `GET …/sign-in`: a signed state bound to the browser by a cookie (auth/oauth-state.ts, as for the install),
 *    then HubSpot's consent screen with the app's own scopes. HubSpot lets a user authorize only the scopes
 *    their permissions cover, so a user who may not edit companies does not get through.
 * 3. `GET …/callback`: the code exchanged, the token introspected: the portal and the user are the token's.
 *    Refused when that portal is not the one the card named, when the token does not carry the companies'
 *    write scope, when the portal has no connected installation, when the company is not that portal's.
 *    Otherwise the company's review candidates or its request, with the actions, and a session cookie
 *    (sealed, SameSite=Strict, 10 minutes) naming the proven portal, user and company.
 * 4. `POST …/act`: the action, with the session's user as the decision log's actor; the portal's card budget
 *    is counted for it. The session ends with it.
 * The sign-in's tokens are not kept: the installation's own tokens do every read and write.
 */

export interface HubSpotCardSignInDeps {
  oauth: HubSpotOAuthClientConfig;
  /** `APP_URL`. */
  appUrl: string;
  /** HubSpot's consent screen (`config.hubspot.authorizeUrl`). */
  authorizeUrl: string;
  states: OAuthStateStore;
  /** Seals the session cookie, bound by its associated data to this cookie alone. */
  box: SecretBox;
  cards: RecordCardHost;
  limit: CardRateLimit;
  logger?: Logger;
  now?: () => number;
}

/** The state's provider name: its cookie is scoped to this prefix, apart from the install's. */
export const HUBSPOT_CARD_STATE = 'hubspot-card';
const SESSION_COOKIE = 'rc_hubspot_card';
const SESSION_SECONDS = 600;
/** The scope whose grant says the signed-in user may edit companies in the portal. */
export const COMPANY_WRITE_SCOPE = 'crm.objects.companies.write';

const NUMERIC = /^\d{1,20}$/;

const sessionSchema = z.object({
  portalId: z.string(),
  userId: z.string(),
  installationId: z.string(),
  companyId: z.string(),
  expiresAt: z.number(),
});
type CardSession = z.infer<typeof sessionSchema>;

function idParam(value: unknown): string | null {
  return typeof value === 'string' && NUMERIC.test(value) ? value : null;
}

export function hubspotCardRedirectUri(appUrl: string): string {
  return `${appUrl.replace(/\/+$/, '')}${HUBSPOT_CARD_CALLBACK_PATH}`;
}

interface SignInContext {
  deps: HubSpotCardSignInDeps;
  appUrl: string;
  now: () => number;
  box: SecretBox;
  sessionCookie(value: string, maxAgeSeconds: number): string;
}

export function createHubSpotCardSignInRouter(deps: HubSpotCardSignInDeps): Router {
  const appUrl = deps.appUrl.replace(/\/+$/, '');
  const secure = appUrl.startsWith('https:');
  const ctx: SignInContext = {
    deps,
    appUrl,
    now: deps.now ?? Date.now,
    box: deps.box,
    sessionCookie: (value, maxAgeSeconds) =>
      serializeCookie(SESSION_COOKIE, value, {
        path: HUBSPOT_CARD_OAUTH_PREFIX,
        maxAgeSeconds,
        httpOnly: true,
        // Strict: a form posted from another site carries no session.
        sameSite: 'Strict',
        secure,
      }),
  };
  const router = Router();
  router.get(HUBSPOT_CARD_ACT_PATH, actPageRoute);
  router.get(HUBSPOT_CARD_SIGN_IN_PATH, signInRoute(ctx));
  router.get(HUBSPOT_CARD_CALLBACK_PATH, callbackRoute(ctx));
  router.post(HUBSPOT_CARD_ACT_PATH, express.urlencoded({ extended: false, limit: '8kb' }), actRoute(ctx));
  return router;
}

/** 1: the page the card opens in HubSpot's iframe modal. */
function actPageRoute(req: Request, res: Response): void {
  const portalId = idParam(req.query.portalId);
  const companyId = idParam(req.query.companyId);
  if (!portalId || !companyId) {
    sendCardPage(res, refusalPage(400, 'The card did not say which company this is.'));
    return;
  }
  const query = new URLSearchParams({ portalId, companyId }).toString();
  // Shown inside HubSpot's iframe modal: framing is allowed for HubSpot's pages only.
  sendCardPage(res, signInPage(`${HUBSPOT_CARD_SIGN_IN_PATH}?${query}`), { framedByHubSpot: true });
}

/** 2: HubSpot's consent screen, with a state naming the portal and company the card named. */
function signInRoute({ deps, appUrl }: SignInContext) {
  return (req: Request, res: Response): void => {
    const portalId = idParam(req.query.portalId);
    const companyId = idParam(req.query.companyId);
    if (!portalId || !companyId) {
      sendCardPage(res, refusalPage(400, 'The card did not say which company this is.'));
      return;
    }
    const { state, cookie } = deps.states.issue(HUBSPOT_CARD_STATE, { portalId, companyId });
    const params: [string, string][] = [
      ['client_id', deps.oauth.clientId],
      ['redirect_uri', hubspotCardRedirectUri(appUrl)],
      // The app's required scopes, as the install asks them: the consent URL known to work for this app.
      ['scope', HUBSPOT_SCOPES.join(' ')],
      ['state', state],
    ];
    const query = params.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
    res
      .append('Set-Cookie', cookie)
      .set('cache-control', 'no-store')
      .redirect(302, `${deps.authorizeUrl}${deps.authorizeUrl.includes('?') ? '&' : '?'}${query}`);
  };
}

/** 3: who HubSpot says signed in, checked against the card's portal and the company; then the actions. */
function callbackRoute(ctx: SignInContext) {
  const { deps, appUrl } = ctx;
  return async (req: Request, res: Response): Promise<void> => {
    res.append('Set-Cookie', deps.states.clearedCookie(HUBSPOT_CARD_STATE));
    let named: Record<string, string>;
    try {
      named = deps.states.consume(HUBSPOT_CARD_STATE, req.query.state, req.get('cookie'));
    } catch (err) {
      if (!(err instanceof OAuthStateError)) throw err;
      sendCardPage(res, refusalPage(400, 'This sign-in link is not valid any more. Open the card again.'));
      return;
    }
    const portalId = idParam(named.portalId);
    const companyId = idParam(named.companyId);
    const code = typeof req.query.code === 'string' && req.query.code !== '' ? req.query.code : null;
    if (!portalId || !companyId || !code) {
      sendCardPage(res, refusalPage(400, 'HubSpot did not sign you in. Nothing was changed.'));
      return;
    }
    const proven = await provenUser(deps, appUrl, code);
    if (!proven) {
      sendCardPage(res, refusalPage(502, 'HubSpot did not confirm who you are. Nothing was changed.'));
      return;
    }
    if (proven.hubId !== portalId) {
      deps.logger?.warn(
        { namedPortal: portalId, tokenPortal: proven.hubId, userId: proven.userId },
        'HubSpot card: sign-in for another portal than the card named',
      );
      sendCardPage(
        res,
        refusalPage(403, 'You signed in to another HubSpot account than the one this card belongs to.'),
      );
      return;
    }
    if (!proven.scopes.includes(COMPANY_WRITE_SCOPE)) {
      sendCardPage(res, refusalPage(403, 'Your HubSpot user may not edit companies. Nothing was changed.'));
      return;
    }
    const installation = await deps.cards.installationOf(HUBSPOT_KIND, portalId);
    if (installation?.status !== 'connected') {
      sendCardPage(res, refusalPage(403, 'The report connector is not connected to this HubSpot account.'));
      return;
    }
    const source = await deps.cards.read(installation.id, companyId);
    if (!source) {
      sendCardPage(res, refusalPage(404, 'This HubSpot account has no such company.'));
      return;
    }
    const session: CardSession = {
      portalId,
      userId: proven.userId,
      installationId: installation.id,
      companyId,
      expiresAt: ctx.now() + SESSION_SECONDS * 1000,
    };
    const sealed = ctx.box.seal(JSON.stringify(session), SESSION_COOKIE);
    res.append('Set-Cookie', ctx.sessionCookie(sealed, SESSION_SECONDS));
    sendCardPage(res, actionsPage(cardDataOf(source), HUBSPOT_CARD_ACT_PATH));
  };
}

/** 4: the action, in the signed-in user's name; the session is spent whatever the answer. */
function actRoute(ctx: SignInContext) {
  const { deps } = ctx;
  return async (req: Request, res: Response): Promise<void> => {
    const session = openSession(ctx.box, req, ctx.now);
    res.append('Set-Cookie', ctx.sessionCookie('', 0));
    if (!session || !sameOrigin(req, ctx.appUrl)) {
      sendCardPage(res, refusalPage(401, 'Sign in with HubSpot from the card first. Nothing was changed.'));
      return;
    }
    const budget = await deps.limit.take(session.portalId);
    if (!budget.allowed) {
      res.set('Retry-After', String(budget.retryAfterSeconds));
      sendCardPage(
        res,
        refusalPage(429, 'Too many actions from this HubSpot account; try again in a minute.'),
      );
      return;
    }
    const body = (req.body ?? {}) as Record<string, unknown>;
    const refusal = await perform(deps, session, body);
    if (refusal) {
      sendCardPage(res, refusal);
      return;
    }
    deps.logger?.info(
      {
        installationId: session.installationId,
        companyId: session.companyId,
        action: body.action,
        userId: session.userId,
      },
      'HubSpot card: action taken by a signed-in user',
    );
    sendCardPage(res, { status: 200, title: doneTitle(String(body.action)), paragraphs: [] });
  };
}

/** The posted action done for the session's company and user; the refusal's page when it was not. */
async function perform(
  deps: HubSpotCardSignInDeps,
  session: CardSession,
  body: Record<string, unknown>,
): Promise<CardActPage | null> {
  const by = { kind: 'crm-user' as const, id: session.userId };
  try {
    if (body.action === 'request') {
      await deps.cards.request(session.installationId, session.companyId, by);
      return null;
    }
    const decision = cardDecisionSchema.safeParse(
      body.action === 'accept' ? { action: 'accept', slug: body.slug } : { action: body.action },
    );
    if (!decision.success) return refusalPage(400, 'Choose one of the reports, or "None of these".');
    await deps.cards.decide(session.installationId, session.companyId, decision.data, by);
    return null;
  } catch (err) {
    if (!(err instanceof RecordCardError)) throw err;
    // The seller's words for the refusal, never the operator's (which name admin actions).
    return refusalPage(err.status, ACTION_REFUSAL_WORDS[err.code] ?? 'Not done: nothing was changed.');
  }
}

/** The portal, user and scopes of the token HubSpot issued for the code; null when HubSpot does not say. */
async function provenUser(
  deps: HubSpotCardSignInDeps,
  appUrl: string,
  code: string,
): Promise<{ hubId: string; userId: string; scopes: string[] } | null> {
  try {
    const grant = await exchangeHubSpotCode(deps.oauth, code, hubspotCardRedirectUri(appUrl));
    const info = await introspectHubSpotToken(deps.oauth, grant.tokens.accessToken);
    if (!info.active || !info.hubId || !info.userId) return null;
    return { hubId: info.hubId, userId: info.userId, scopes: info.scopes };
  } catch (err) {
    if (!(err instanceof HubSpotOAuthError)) throw err;
    deps.logger?.warn({ err }, 'HubSpot card: sign-in code exchange or introspection failed');
    return null;
  }
}

function openSession(box: SecretBox, req: Request, now: () => number): CardSession | null {
  const sealed = cookieValue(req.get('cookie'), SESSION_COOKIE);
  if (!sealed) return null;
  try {
    const session = sessionSchema.parse(JSON.parse(box.open(sealed, SESSION_COOKIE)));
    return session.expiresAt > now() ? session : null;
  } catch (err) {
    if (err instanceof DecryptionError || err instanceof SyntaxError || err instanceof z.ZodError)
      return null;
    throw err;
  }
}

/** A form posted from this app's own page: an `Origin` naming another site is refused. */
function sameOrigin(req: Request, appUrl: string): boolean {
  const origin = req.get('origin');
  return origin === undefined || origin === new URL(appUrl).origin;
}
