import { CrmRevocationError } from '../../src/crm/errors.js';
import type { CrmProvider } from '../../src/crm/provider.js';
import { CardRateLimit } from './card/card-rate-limit.js';
import { createHubSpotCardSignInRouter } from './card/card-sign-in.js';
import { type HubSpotConfig, hubspotEnvSchema, readHubSpotConfig } from './config.js';
import { createHubSpotConnector, createJournalHubSpotConnector } from './create-connector.js';
import { HUBSPOT_PROPERTY_NAMES } from './fields/field-names.js';
import { journalTokenRequest } from './journal/journal.js';
import type { LocalHubSpot } from './local/local-hubspot.js';
import { writeHubSpotCardSources } from './manifest/card-files.js';
import { HUBSPOT_LISTING_GUIDE } from './manifest/listing-guide.js';
import { writeHubSpotManifests } from './manifest/manifest.js';
import { HUBSPOT_INSTALL_PATH } from './oauth/oauth-flow.js';
import { createHubSpotNotConfiguredRouter, createHubSpotOAuthRouter } from './oauth/oauth-routes.js';
import { createHubSpotTokenRefresher } from './oauth/oauth-tokens.js';
import { revokeHubSpotInstall } from './oauth/revoke.js';
import { ensureHubSpotPrivateAppInstallation } from './oauth/token-install.js';
import {
  ALERT_NOTES_INSTALL_PARAM,
  HUBSPOT_JOURNAL_PROPERTIES,
  HUBSPOT_LIMITS,
  HUBSPOT_NOTE_SCOPES,
  HUBSPOT_PROVIDER,
} from './provider.js';
import { HUBSPOT_RETRY_BUDGET } from './retry-budget.js';
import { createHubSpotWebhookRouter } from './webhooks/webhook-routes.js';

/**
 * HubSpot as the application sees it: one provider object. Tests, benchmarks and the local stand-in import
 * the modules of this folder directly; the application only ever reaches HubSpot through this object.
 */
export const hubspotProvider: CrmProvider<typeof HUBSPOT_PROVIDER, HubSpotConfig, LocalHubSpot> = {
  kind: HUBSPOT_PROVIDER,
  label: 'HubSpot',
  accountNoun: 'portal',
  fieldNames: HUBSPOT_PROPERTY_NAMES,
  activity: {
    noun: 'a note on the company',
    needs: `HubSpot notes need the scope ${HUBSPOT_NOTE_SCOPES.join(' ')}, which the app asks for only when this is on.`,
    grant: {
      path: `${HUBSPOT_INSTALL_PATH}?${ALERT_NOTES_INSTALL_PARAM}=1`,
      label: 'Grant the note scope (install the app again)',
      tokenMode: `This installation uses HUBSPOT_ACCESS_TOKEN: give that app or key the scope ${HUBSPOT_NOTE_SCOPES.join(' ')} in HubSpot.`,
    },
  },
  retryBudget: HUBSPOT_RETRY_BUDGET,
  manifestsName: 'the HubSpot project',
  installPath: HUBSPOT_INSTALL_PATH,
  listingGuide: HUBSPOT_LISTING_GUIDE,
  limits: HUBSPOT_LIMITS,
  env: hubspotEnvSchema,
  readConfig: readHubSpotConfig,
  tokenVariable: 'HUBSPOT_ACCESS_TOKEN',
  tokenModeVariables: ['HUBSPOT_ACCESS_TOKEN'],
  pushedChanges: "HubSpot's webhooks",
  // HubSpot pushes changes by webhook; the poll, when configured, reads the webhooks journal for missed ones.
  pollIntervalMs: ({ hubspot }) => (hubspot.journalMinutes ? hubspot.journalMinutes * 60_000 : null),
  createConnector: ({ config, installation, tokens, appToken, gate, onUsage }) => {
    const options = {
      apiUrl: config.hubspot.apiUrl,
      apiVersion: config.hubspot.apiVersion,
      ...(installation.timeZone ? { timeZone: installation.timeZone } : {}),
      tokens,
      gate,
      ...(onUsage ? { onUsage } : {}),
    };
    const { journalMinutes, clientId, clientSecret } = config.hubspot;
    if (!journalMinutes || !clientId || !clientSecret) return createHubSpotConnector(options);
    const { apiUrl } = config.hubspot;
    return createJournalHubSpotConnector(options, {
      apiUrl,
      // Client-credentials tokens are per app: one per client id, shared by every portal's reader.
      tokens: appToken(
        `hubspot-journal:${clientId}`,
        journalTokenRequest({ apiUrl, clientId, clientSecret }),
      ),
      portalId: installation.externalId,
      properties: HUBSPOT_JOURNAL_PROPERTIES,
    });
  },
  tokenRefresher: ({ hubspot }) =>
    hubspot.clientId && hubspot.clientSecret
      ? createHubSpotTokenRefresher({
          apiUrl: hubspot.apiUrl,
          apiVersion: hubspot.apiVersion,
          clientId: hubspot.clientId,
          clientSecret: hubspot.clientSecret,
        })
      : null,
  routes({ appUrl, hubspot }, host) {
    const routers = [];
    if (hubspot.clientSecret) {
      routers.push(
        createHubSpotWebhookRouter({
          clientSecret: hubspot.clientSecret,
          publicUrl: appUrl,
          logger: host.logger,
          onChanges: (portalId, changes) => host.crmChanged(portalId, changes),
          ...(host.eventMarks ? { marks: host.eventMarks } : {}),
          ...(host.webhookDeadlineMs ? { deadlineMs: host.webhookDeadlineMs } : {}),
        }),
      );
    }
    if (hubspot.clientId && hubspot.clientSecret && host.cards) {
      // The card's actions: taken only for a user HubSpot's sign-in proved (card/card-sign-in.ts).
      routers.push(
        createHubSpotCardSignInRouter({
          oauth: {
            apiUrl: hubspot.apiUrl,
            apiVersion: hubspot.apiVersion,
            clientId: hubspot.clientId,
            clientSecret: hubspot.clientSecret,
          },
          appUrl,
          authorizeUrl: hubspot.authorizeUrl,
          states: host.states,
          box: host.storage.box,
          cards: host.cards,
          limit: host.storage.store(
            'hubspot-card-rate-limit',
            () => new CardRateLimit(host.storage.redis, host.storage.keys),
          ),
          logger: host.logger,
        }),
      );
    }
    if (hubspot.clientId && hubspot.clientSecret) {
      routers.push(
        createHubSpotOAuthRouter({
          clientId: hubspot.clientId,
          clientSecret: hubspot.clientSecret,
          appUrl,
          apiUrl: hubspot.apiUrl,
          apiVersion: hubspot.apiVersion,
          authorizeUrl: hubspot.authorizeUrl,
          states: host.states,
          installations: host.installations,
          onInstalled: (installation) => host.installed(installation),
          logger: host.logger,
          ...(host.oauthPage ? { renderPage: host.oauthPage } : {}),
        }),
      );
    } else {
      routers.push(
        createHubSpotNotConfiguredRouter({
          missing: [
            ...(hubspot.clientId ? [] : ['HUBSPOT_CLIENT_ID']),
            ...(hubspot.clientSecret ? [] : ['HUBSPOT_CLIENT_SECRET']),
          ],
          tokenVariable: 'HUBSPOT_ACCESS_TOKEN',
          ...(host.oauthPage ? { renderPage: host.oauthPage } : {}),
        }),
      );
    }
    return routers;
  },
  revoke: ({ hubspot }, input) => {
    if (!hubspot.clientId || !hubspot.clientSecret) {
      throw new CrmRevocationError(
        'HUBSPOT_CLIENT_ID and HUBSPOT_CLIENT_SECRET are not set, so the app cannot uninstall itself',
        HUBSPOT_PROVIDER,
        'Uninstall the app in HubSpot (Settings > Integrations > Connected apps).',
      );
    }
    return revokeHubSpotInstall(
      {
        apiUrl: hubspot.apiUrl,
        apiVersion: hubspot.apiVersion,
        clientId: hubspot.clientId,
        clientSecret: hubspot.clientSecret,
      },
      input,
    );
  },
  installFromToken: async ({ hubspot }, installations) =>
    hubspot.accessToken
      ? ensureHubSpotPrivateAppInstallation(
          { apiUrl: hubspot.apiUrl, apiVersion: hubspot.apiVersion, accessToken: hubspot.accessToken },
          installations,
        )
      : null,
  writeManifests: writeHubSpotManifests,
  writeSources: () => writeHubSpotCardSources(),
  startLocal: async (options) => (await import('./local/stand-in.js')).startHubSpotStandIn(options),
};
