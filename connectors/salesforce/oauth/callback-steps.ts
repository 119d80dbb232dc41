import type { Response } from 'express';
import {
  connectedPage,
  type InstalledFacts,
  sendOAuthPage,
  waitingForApprovalPage,
} from '../../../src/crm/oauth-page.js';
import { isLetIn } from '../../../src/installations/let-in.js';
import { type Installation, installationId } from '../../../src/installations/store.js';
import type { SalesforceAppCredentials } from '../connections/connections.js';
import { requireSalesforceHost, SalesforceHostRefusedError } from '../hosts.js';
import { SALESFORCE_KIND } from '../provider.js';
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
import {
  refusalWords,
  type SalesforceOAuthContext,
  sendPage,
  sendUnknownConnection,
  startAgain,
} from './oauth-context.js';

/**
 * The callback's steps once the state and code are in hand (callback-route.ts runs them in order): trade the
 * code, confirm the org, bind the connection, store the installation, set it up. Each answers with a page that
 * says what happened and returns null (or false) when it fails, so nothing after it runs.
 */

/** Which install this callback finishes: the connection it signs in through and the link to start again. */
export interface CallbackAttempt {
  connectionId: string | undefined;
  installLink: string;
}

const NOT_COMPLETED = 'Salesforce did not complete the install';

const WHERE_SCORES_SHOW =
  "report scores appear on its Accounts (the Report Connector fields; users see them once a Salesforce admin assigns the app's permission sets)";

/** The code and verifier traded for tokens whose signature verifies with the app's secret. */
export async function tradeCode(
  ctx: SalesforceOAuthContext,
  res: Response,
  app: SalesforceAppCredentials,
  grant: { code: string; codeVerifier: string },
  { connectionId, installLink }: CallbackAttempt,
): Promise<SalesforceTokenResponse | null> {
  let tokens: SalesforceTokenResponse;
  try {
    tokens = tokenResponseSchema.parse(
      await exchangeAuthorizationCode(app, { ...grant, redirectUri: ctx.redirectUri }, ctx.policy),
    );
  } catch (err) {
    ctx.deps.logger.warn({ err }, 'salesforce token exchange failed');
    const why =
      err instanceof SalesforceHostRefusedError || err instanceof SalesforceAnswerError
        ? `Nothing was stored: ${refusalWords(err)}.`
        : 'Exchanging the authorization code failed: Salesforce did not accept it (it may have expired or been used already).';
    sendPage(ctx, res, 502, NOT_COMPLETED, [why], startAgain(installLink));
    return null;
  }
  if (!verifyTokenSignature(tokens, app.clientSecret)) {
    ctx.deps.logger.warn('salesforce token response signature did not verify');
    sendPage(
      ctx,
      res,
      502,
      NOT_COMPLETED,
      [
        'The token response from Salesforce failed its signature check, so it was not trusted.',
        `Check the consumer secret (${connectionId ? `connection ${connectionId}` : 'SALESFORCE_CLIENT_SECRET'}) and start the install again.`,
      ],
      startAgain(installLink),
    );
    return null;
  }
  return tokens;
}

/** The org and user of the new token, from Salesforce's identity service on a Salesforce instance host. */
export async function confirmOrg(
  ctx: SalesforceOAuthContext,
  res: Response,
  tokens: SalesforceTokenResponse,
  { connectionId, installLink }: CallbackAttempt,
): Promise<SalesforceIdentity | null> {
  try {
    requireSalesforceHost(tokens.instance_url, ctx.policy, 'instance URL');
    return await confirmIdentity(tokens.id, tokens.access_token, ctx.policy);
  } catch (err) {
    if (
      !(err instanceof SalesforceHostRefusedError) &&
      !(err instanceof IdentityNotConfirmedError) &&
      !(err instanceof SalesforceAnswerError)
    ) {
      throw err;
    }
    ctx.deps.logger.warn(
      { code: err.code, connection: connectionId },
      `salesforce install refused: ${err.message}`,
    );
    sendPage(
      ctx,
      res,
      502,
      NOT_COMPLETED,
      [
        `The org of the new token could not be confirmed with Salesforce, so nothing was stored: ${refusalWords(err)}.`,
        'Start the install again; if it fails again, tell the operator of this app.',
      ],
      startAgain(installLink),
    );
    return null;
  }
}

/** A connection belongs to the org of its first install; another org's callback through it is refused. */
export async function bindConnection(
  ctx: SalesforceOAuthContext,
  res: Response,
  identity: SalesforceIdentity,
  connectionId: string | undefined,
): Promise<boolean> {
  if (!connectionId || !ctx.deps.connections) return true;
  const bound = await ctx.deps.connections.bindOrg(connectionId, identity.orgId);
  if (bound === null) {
    sendUnknownConnection(ctx, res);
    return false;
  }
  if (bound.slice(0, 15) === identity.orgId.slice(0, 15)) return true;
  ctx.deps.logger.warn(
    {
      connection: connectionId,
      boundTo: bound,
      org: identity.orgId,
      code: 'SALESFORCE_CONNECTION_OTHER_ORG',
    },
    'salesforce install refused: the connection belongs to another org',
  );
  sendPage(ctx, res, 403, 'This install link belongs to another org', [
    `The Salesforce connection ${connectionId} was installed in the org ${bound}; it cannot install the org ${identity.orgId}. Nothing was stored.`,
    "Ask the app's operator for the install link of your org's own connection.",
  ]);
  return false;
}

/** The installation upserted with the new tokens, and whether the org was installed before. */
export async function storeInstallation(
  ctx: SalesforceOAuthContext,
  res: Response,
  tokens: SalesforceTokenResponse,
  identity: SalesforceIdentity,
  { connectionId, installLink }: CallbackAttempt,
): Promise<{ installation: Installation; reconnected: boolean } | null> {
  let installation: Installation;
  let reconnected: boolean;
  try {
    reconnected = (await ctx.deps.store.get(installationId(SALESFORCE_KIND, identity.orgId))) !== null;
    installation = await ctx.deps.store.upsert({
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
    ctx.deps.logger.error(
      { err, org: identity.orgId },
      'salesforce install: could not store the installation',
    );
    sendPage(
      ctx,
      res,
      503,
      'Install could not finish',
      [
        'Salesforce approved the install, but the app could not save it (its Redis is unavailable).',
        'Start the install again in a minute.',
      ],
      startAgain(installLink),
    );
    return null;
  }
  ctx.deps.logger.info(
    { installation: installation.id, org: identity.orgId, user: identity.userId, connection: connectionId },
    'salesforce org connected',
  );
  return { installation, reconnected };
}

/** The post-install setup, then the result page: connected, or waiting for the operator's approval. */
export async function finishInstall(
  ctx: SalesforceOAuthContext,
  res: Response,
  done: {
    installation: Installation;
    reconnected: boolean;
    tokens: SalesforceTokenResponse;
    identity: SalesforceIdentity;
    installLink: string;
  },
): Promise<void> {
  const { installation, tokens, identity } = done;
  const notes: string[] = [];
  if (!tokens.refresh_token) {
    notes.push(
      'Salesforce issued no refresh token, so the connection ends when this session expires: allow the ' +
        '"refresh_token, offline_access" scope in the External Client App and install again.',
    );
  }
  try {
    await ctx.deps.onInstalled(installation);
  } catch (err) {
    ctx.deps.logger.error({ err, installation: installation.id }, 'salesforce post-install setup failed');
    return sendPage(
      ctx,
      res,
      500,
      'Connected, but setup did not finish',
      [
        `The Salesforce org ${identity.orgId} is connected, but setting it up failed. The details are in the app's log.`,
        'Fix the cause and install again; installing again is safe.',
      ],
      [...startAgain(done.installLink), { href: '/admin', label: 'Open the admin page' }],
    );
  }
  const facts: InstalledFacts = {
    crmLabel: 'Salesforce',
    accountNoun: 'org',
    account: `${identity.orgId} (${tokens.instance_url})`,
    installationId: installation.id,
    whereScoresShow: WHERE_SCORES_SHOW,
    reconnected: done.reconnected,
  };
  const saved = await ctx.deps.store.get(installation.id);
  const result =
    saved && !isLetIn(saved) ? waitingForApprovalPage(facts, notes) : connectedPage(facts, notes);
  sendOAuthPage(res, result, ctx.deps.renderPage);
}
