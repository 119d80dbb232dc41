import express, { type Router } from 'express';
import { salesforceConnectionRoutes } from '../../connectors/salesforce/connections/connection-routes.js';
import type { SalesforceConnectionStore } from '../../connectors/salesforce/connections/connections.js';
import type { LocalSalesforce } from '../../connectors/salesforce/local/index.js';
import type { SalesforceOAuthDeps } from '../../connectors/salesforce/oauth/oauth-context.js';
import { createSalesforceOAuthRouter } from '../../connectors/salesforce/oauth/oauth-routes.js';
import type { Config } from '../../src/config.js';

/** The app's Salesforce settings for OAuth against a local org: its connected app's keys and its login URL. */
export function localSalesforceConfig(
  appUrl: string,
  local: LocalSalesforce,
  loginUrl: string,
): Pick<Config, 'appUrl' | 'salesforce'> {
  return {
    appUrl,
    salesforce: {
      clientId: local.org.clientId,
      clientSecret: local.org.clientSecret,
      loginUrl,
      instanceUrl: undefined,
      accessToken: undefined,
      apiVersion: '63.0',
      pollSeconds: 120,
      usagePauseShare: 0.8,
      extraHosts: [],
      // The local org listens on loopback over http: the development setting every such test needs.
      allowLocalHosts: true,
      changeEvents: false,
      pubSubEndpoint: 'api.pubsub.salesforce.com:7443',
    },
  };
}

/**
 * The admin API's Salesforce connections and the OAuth routes on one router, as the server mounts them; every
 * install is let in at once, as by the deployment's allowlist.
 */
export function connectionAndOAuthRoutes(
  deps: Omit<SalesforceOAuthDeps, 'onInstalled' | 'connections' | 'config'> & {
    config: SalesforceOAuthDeps['config'] & Parameters<typeof salesforceConnectionRoutes>[0];
    connections: SalesforceConnectionStore;
  },
): Router {
  const router = express.Router();
  router.use('/admin/api', express.json(), salesforceConnectionRoutes(deps.config, deps.connections));
  router.use(
    createSalesforceOAuthRouter({
      ...deps,
      onInstalled: async (installation) => {
        await deps.store.approve(installation.id, 'allowlist');
      },
    }),
  );
  return router;
}
