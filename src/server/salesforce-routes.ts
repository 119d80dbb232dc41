import type { Router } from 'express';
import { createSalesforceOAuthRouter } from '../../connectors/salesforce/index.js';
import type { AppContext } from '../app/context.js';
import type { InstallationService } from '../app/installation-service.js';

/** Salesforce OAuth routes, when a connected app is configured. */
export function salesforceOAuthRouter(ctx: AppContext, service: InstallationService): Router | null {
  if (!ctx.config.salesforce.clientId || !ctx.config.salesforce.clientSecret) return null;
  return createSalesforceOAuthRouter({
    config: ctx.config,
    states: ctx.states,
    store: ctx.installations,
    logger: ctx.logger,
    onInstalled: async (installation) => {
      await service.installed(installation);
    },
  });
}
