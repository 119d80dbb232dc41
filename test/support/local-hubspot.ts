import {
  createLocalHubSpot,
  LOCAL_HUBSPOT_CLIENT_ID,
  LOCAL_HUBSPOT_CLIENT_SECRET,
  type LocalHubSpot,
  type LocalHubSpotOptions,
  type LocalHubSpotServer,
} from '../../connectors/hubspot/local/index.js';
import type { HubSpotOAuthClientConfig } from '../../connectors/hubspot/oauth/oauth-tokens.js';

/** A local HubSpot on a free loopback port, and the OAuth client settings of its public app. */
export interface RunningLocalHubSpot {
  hubspot: LocalHubSpot;
  server: LocalHubSpotServer;
  oauth: HubSpotOAuthClientConfig;
}

/** The OAuth client settings the connector needs to install into the local HubSpot at `server`. */
export function localHubSpotOAuth(server: LocalHubSpotServer): HubSpotOAuthClientConfig {
  return { apiUrl: server.url, clientId: LOCAL_HUBSPOT_CLIENT_ID, clientSecret: LOCAL_HUBSPOT_CLIENT_SECRET };
}

export async function startLocalHubSpot(options: LocalHubSpotOptions = {}): Promise<RunningLocalHubSpot> {
  const hubspot = createLocalHubSpot(options);
  const server = await hubspot.listen();
  return { hubspot, server, oauth: localHubSpotOAuth(server) };
}
