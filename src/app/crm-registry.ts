import {
  createHubSpotConnector,
  createHubSpotTokenRefresher,
  HUBSPOT_LIMITS,
} from '../../connectors/hubspot/index.js';
import {
  createSalesforceConnector,
  createSalesforceTokenRefresher,
  SALESFORCE_LIMITS,
  SalesforceUsageTracker,
} from '../../connectors/salesforce/index.js';
import type { AccessTokenSource, TokenRefresher } from '../auth/token-manager.js';
import type { Config } from '../config.js';
import type { CrmConnector, CrmKind, ProviderLimits } from '../crm/connector.js';
import type { RequestGate } from '../crm/request-gate.js';
import type { Installation } from '../installations/store.js';

/** How to build each CRM's connector: the only place that knows both CRMs exist. */

export interface ConnectorInput {
  config: Config;
  installation: Installation;
  tokens: AccessTokenSource;
  gate: RequestGate;
  /** Webhook-driven work is urgent; backfills, polls and the sweep are not (Salesforce pauses those near its daily limit). */
  urgent: boolean;
}

export interface ConnectorFactory {
  limits: ProviderLimits;
  create(input: ConnectorInput): CrmConnector;
}

// One usage tracker per org per process, so every connector of an org sees the same daily usage.
const salesforceUsage = new Map<string, SalesforceUsageTracker>();

export const connectorFactories: Record<CrmKind, ConnectorFactory> = {
  hubspot: {
    limits: HUBSPOT_LIMITS,
    create: ({ config, tokens, gate }) =>
      createHubSpotConnector({ apiUrl: config.hubspot.apiUrl, tokens, gate }),
  },
  salesforce: {
    limits: SALESFORCE_LIMITS,
    create: ({ config, installation, tokens, gate, urgent }) => {
      let usage = salesforceUsage.get(installation.id);
      if (!usage) {
        usage = new SalesforceUsageTracker({ pauseShare: config.salesforce.usagePauseShare });
        salesforceUsage.set(installation.id, usage);
      }
      return createSalesforceConnector({
        installation,
        tokens,
        gate,
        config,
        usage,
        priority: urgent ? 'urgent' : 'background',
      });
    },
  },
};

export function tokenRefreshers(config: Config): Partial<Record<CrmKind, TokenRefresher>> {
  const out: Partial<Record<CrmKind, TokenRefresher>> = {};
  if (config.hubspot.clientId && config.hubspot.clientSecret) {
    out.hubspot = createHubSpotTokenRefresher({
      apiUrl: config.hubspot.apiUrl,
      clientId: config.hubspot.clientId,
      clientSecret: config.hubspot.clientSecret,
    });
  }
  if (config.salesforce.clientId && config.salesforce.clientSecret) {
    out.salesforce = createSalesforceTokenRefresher(config);
  }
  return out;
}
