import type { CrmProvider, ProviderStorage } from '../../src/crm/provider.js';
import { readSalesforceConfig, type SalesforceConfig, salesforceEnvSchema } from './config.js';
import { salesforceConnectionRoutes } from './connections/connection-routes.js';
import { SalesforceConnectionStore } from './connections/connections.js';
import { createSalesforceConnector } from './connector.js';
import { SALESFORCE_FIELD_NAMES } from './fields/field-names.js';
import type { LocalSalesforce } from './local/server.js';
import { writeSalesforceManifests } from './manifest/manifest.js';
import { createSalesforceOAuthRouter, SALESFORCE_OAUTH_ROUTES } from './oauth/oauth-routes.js';
import { revokeSalesforceInstall } from './oauth/revoke.js';
import { ensureSalesforceTokenInstallation } from './oauth/token-install.js';
import { createSalesforceTokenRefresher } from './oauth/token-refresher.js';
import { SalesforceOrgMemory } from './org-memory.js';
import { SALESFORCE_LIMITS, SALESFORCE_PROVIDER } from './provider.js';
import { SALESFORCE_RETRY_BUDGET } from './retry-budget.js';

/** The org connections, built once per application. */
function connectionStore(storage: ProviderStorage): SalesforceConnectionStore {
  return storage.store(
    'salesforce-connections',
    () => new SalesforceConnectionStore(storage.redis, storage.box, storage.keys),
  );
}

/**
 * Salesforce as the application sees it: one provider object. Tests, benchmarks and the local stand-in import
 * the modules of this folder directly; the application only ever reaches Salesforce through this object.
 */
export const salesforceProvider: CrmProvider<typeof SALESFORCE_PROVIDER, SalesforceConfig, LocalSalesforce> =
  {
    kind: SALESFORCE_PROVIDER,
    label: 'Salesforce',
    accountNoun: 'org',
    fieldNames: SALESFORCE_FIELD_NAMES,
    activity: {
      noun: 'a Task on the Account',
      needs:
        'Salesforce Tasks need no further OAuth scope (api covers them); the integration user needs permission to create Tasks.',
      grant: null,
    },
    retryBudget: SALESFORCE_RETRY_BUDGET,
    manifestsName: 'the SFDX project',
    installPath: SALESFORCE_OAUTH_ROUTES.install,
    limits: SALESFORCE_LIMITS,
    env: salesforceEnvSchema,
    readConfig: readSalesforceConfig,
    tokenVariable: 'SALESFORCE_ACCESS_TOKEN',
    tokenModeVariables: ['SALESFORCE_INSTANCE_URL', 'SALESFORCE_ACCESS_TOKEN'],
    // Salesforce sends no webhooks: changes are polled.
    pollIntervalMs: ({ salesforce }) => salesforce.pollSeconds * 1000,
    // Change Data Capture when switched on; loaded on demand, so the gRPC client loads only where it runs.
    changeStream: {
      label: 'Change Data Capture',
      variable: 'SALESFORCE_CHANGE_EVENTS',
      enabled: ({ salesforce }) => salesforce.changeEvents,
      run: async (config, input) =>
        (await import('./changes/cdc-stream.js')).runAccountChangeStream(config, input),
    },
    createConnector({ config, installation, tokens, gate, urgent, kept, onUsage }) {
      // One per org, so every connector of an org sees the same daily usage, Account shape and Task status.
      const memory = kept(() => new SalesforceOrgMemory(config.salesforce.usagePauseShare));
      return createSalesforceConnector({
        installation,
        tokens,
        gate,
        config,
        memory,
        priority: urgent ? 'urgent' : 'background',
        ...(onUsage ? { onUsage } : {}),
      });
    },
    // Always: an installation may come through a Salesforce connection without a global app configured.
    tokenRefresher: (config, storage) => createSalesforceTokenRefresher(config, connectionStore(storage)),
    routes: (config, host) => [
      createSalesforceOAuthRouter({
        config,
        states: host.states,
        store: host.installations,
        connections: connectionStore(host.storage),
        logger: host.logger,
        onInstalled: (installation) => host.installed(installation),
        ...(host.oauthPage ? { renderPage: host.oauthPage } : {}),
      }),
    ],
    adminApi: (config, storage) => salesforceConnectionRoutes(config, connectionStore(storage)),
    revoke: (config, input, storage) => revokeSalesforceInstall(config, input, connectionStore(storage)),
    installFromToken: ensureSalesforceTokenInstallation,
    writeManifests: writeSalesforceManifests,
    startLocal: async (options) => (await import('./local/stand-in.js')).startSalesforceStandIn(options),
  };
