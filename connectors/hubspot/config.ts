import { z } from 'zod';
import { httpUrl, optionalText, readEnvSection, requireTogether } from '../../src/env-schema.js';
import { HUBSPOT_DEFAULT_API_URL, HUBSPOT_DEFAULT_AUTHORIZE_URL } from './provider.js';

/** HubSpot's environment keys: an OAuth app (client id and secret), a private-app token, or both. */
export const hubspotEnvSchema = z.object({
  HUBSPOT_CLIENT_ID: optionalText,
  HUBSPOT_CLIENT_SECRET: optionalText,
  HUBSPOT_ACCESS_TOKEN: optionalText,
  HUBSPOT_API_URL: httpUrl.default(HUBSPOT_DEFAULT_API_URL),
  HUBSPOT_AUTHORIZE_URL: httpUrl.default(HUBSPOT_DEFAULT_AUTHORIZE_URL),
});

/** `config.hubspot`. */
export interface HubSpotConfig {
  clientId: string | undefined;
  clientSecret: string | undefined;
  accessToken: string | undefined;
  apiUrl: string;
  authorizeUrl: string;
}

export function readHubSpotConfig(env: Readonly<Record<string, string | undefined>>): HubSpotConfig {
  const e = readEnvSection(hubspotEnvSchema, env);
  requireTogether(
    ['HUBSPOT_CLIENT_ID', e.HUBSPOT_CLIENT_ID],
    ['HUBSPOT_CLIENT_SECRET', e.HUBSPOT_CLIENT_SECRET],
  );
  return {
    clientId: e.HUBSPOT_CLIENT_ID,
    clientSecret: e.HUBSPOT_CLIENT_SECRET,
    accessToken: e.HUBSPOT_ACCESS_TOKEN,
    apiUrl: e.HUBSPOT_API_URL,
    authorizeUrl: e.HUBSPOT_AUTHORIZE_URL,
  };
}
