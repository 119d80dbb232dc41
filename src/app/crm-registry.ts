import {
  createHubSpotConnector,
  createHubSpotTokenRefresher,
  HUBSPOT_LIMITS,
} from '../../connectors/hubspot/index.js';
import type { AccessTokenSource, TokenRefresher } from '../auth/token-manager.js';
import type { Config } from '../config.js';
import type { CrmConnector, CrmKind, ProviderLimits } from '../crm/connector.js';
import type { RequestGate } from '../crm/request-gate.js';
import type { Installation } from '../installations/store.js';

/** How to build each CRM's connector: the only place that knows both CRMs exist. */

export interface ConnectorFactory {
  limits: ProviderLimits;
  create(input: {
    config: Config;
    installation: Installation;
    tokens: AccessTokenSource;
    gate: RequestGate;
  }): CrmConnector;
}

export const connectorFactories: Record<CrmKind, ConnectorFactory> = {
  hubspot: {
    limits: HUBSPOT_LIMITS,
    create: ({ config, tokens, gate }) =>
      createHubSpotConnector({ apiUrl: config.hubspot.apiUrl, tokens, gate }),
  },
  salesforce: {
    limits: HUBSPOT_LIMITS,
    create: () => {
      throw new Error('the Salesforce connector is not wired in yet');
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
  return out;
}
