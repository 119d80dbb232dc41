import type { AccessTokenSource } from '../../src/auth/token-manager.js';
import { CrmUnauthorizedError } from '../../src/crm/errors.js';
import { HubSpotHttp, type HubSpotHttpOptions } from './api/api-client.js';
import { HubSpotConnector } from './connector.js';
import { HubSpotJournal, type HubSpotJournalConfig } from './journal/journal.js';
import { JournalHubSpotConnector } from './journal/journal-connector.js';
import { HUBSPOT_PROVIDER } from './provider.js';

export type HubSpotConnectorOptions = HubSpotHttpOptions;

/**
 * One connector per portal (installation). Pass `tokens` from `TokenManager.source(installationId)` and the
 * installation's `RequestGate`; `apiUrl` is `config.hubspot.apiUrl`.
 */
export function createHubSpotConnector(options: HubSpotConnectorOptions): HubSpotConnector {
  return new HubSpotConnector(new HubSpotHttp(options));
}

/** A portal's connector that also reads HubSpot's webhooks journal (its change poll). */
export function createJournalHubSpotConnector(
  options: HubSpotConnectorOptions,
  journal: HubSpotJournalConfig,
): JournalHubSpotConnector {
  return new JournalHubSpotConnector(new HubSpotHttp(options), new HubSpotJournal(journal), journal.portalId);
}

/** A token that is never refreshed (a private-app token, or a test). A refusal cannot be repaired here. */
export function staticAccessToken(token: string): AccessTokenSource {
  return {
    current: async () => token,
    refreshAfterRejection: async () => {
      throw new CrmUnauthorizedError(
        'HubSpot refused the access token and it cannot be refreshed: enter a new token',
        HUBSPOT_PROVIDER,
        401,
      );
    },
  };
}
