import type { SalesforceSettings } from '../config.js';
import {
  ConnectionNotFoundError,
  type SalesforceAppCredentials,
  type SalesforceConnectionStore,
} from './connections.js';

/**
 * Which External Client App an OAuth call uses: the installation's (or install link's) connection when it
 * names one, otherwise the deployment's global app (SALESFORCE_CLIENT_ID / SALESFORCE_CLIENT_SECRET).
 */

export class NoSalesforceAppError extends Error {
  readonly code = 'SALESFORCE_APP_NOT_CONFIGURED';
  constructor() {
    super(
      'no Salesforce External Client App is configured: set SALESFORCE_CLIENT_ID and SALESFORCE_CLIENT_SECRET, ' +
        'or create a Salesforce connection in the admin API and install through its link',
    );
    this.name = 'NoSalesforceAppError';
  }
}

/** The global app's keys, or null when the environment names none. */
export function globalAppCredentials(settings: SalesforceSettings): SalesforceAppCredentials | null {
  const { clientId, clientSecret, loginUrl } = settings.salesforce;
  return clientId && clientSecret ? { clientId, clientSecret, loginUrl } : null;
}

/**
 * The app for `connectionId` (throws ConnectionNotFoundError when it is unknown) or, without one, the global
 * app (throws NoSalesforceAppError when the environment names none).
 */
export async function appCredentials(
  settings: SalesforceSettings,
  connections: SalesforceConnectionStore | undefined,
  connectionId: string | undefined,
): Promise<SalesforceAppCredentials> {
  if (connectionId) {
    if (!connections) throw new ConnectionNotFoundError(connectionId);
    return connections.credentials(connectionId);
  }
  const global = globalAppCredentials(settings);
  if (!global) throw new NoSalesforceAppError();
  return global;
}
