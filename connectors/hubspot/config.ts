import { z } from 'zod';
import {
  httpUrl,
  optionalText,
  positiveNumber,
  readEnvSection,
  requireTogether,
} from '../../src/env-schema.js';
import {
  HUBSPOT_API_VERSIONS,
  HUBSPOT_DEFAULT_API_URL,
  HUBSPOT_DEFAULT_API_VERSION,
  HUBSPOT_DEFAULT_AUTHORIZE_URL,
  type HubSpotApiVersion,
} from './provider.js';

/** HubSpot's environment keys: an OAuth app (client id and secret), a private-app token, or both. */
export const hubspotEnvSchema = z.object({
  HUBSPOT_CLIENT_ID: optionalText,
  HUBSPOT_CLIENT_SECRET: optionalText,
  HUBSPOT_ACCESS_TOKEN: optionalText,
  HUBSPOT_API_URL: httpUrl.default(HUBSPOT_DEFAULT_API_URL),
  HUBSPOT_AUTHORIZE_URL: httpUrl.default(HUBSPOT_DEFAULT_AUTHORIZE_URL),
  HUBSPOT_API_VERSION: z
    .enum(HUBSPOT_API_VERSIONS, { error: `expects one of ${HUBSPOT_API_VERSIONS.join(', ')}` })
    .default(HUBSPOT_DEFAULT_API_VERSION),
  /** Minutes between reads of HubSpot's webhooks journal (missed webhooks); unset: no journal. */
  HUBSPOT_JOURNAL_MINUTES: positiveNumber('minutes between journal reads').optional(),
});

/** `config.hubspot`. */
export interface HubSpotConfig {
  clientId: string | undefined;
  clientSecret: string | undefined;
  accessToken: string | undefined;
  apiUrl: string;
  authorizeUrl: string;
  /** `HUBSPOT_API_VERSION`: the date version in every HubSpot path. */
  apiVersion: HubSpotApiVersion;
  /** `HUBSPOT_JOURNAL_MINUTES`: how often the webhooks journal is read; undefined when it is not. */
  journalMinutes: number | undefined;
}

export function readHubSpotConfig(env: Readonly<Record<string, string | undefined>>): HubSpotConfig {
  const e = readEnvSection(hubspotEnvSchema, env);
  requireTogether(
    ['HUBSPOT_CLIENT_ID', e.HUBSPOT_CLIENT_ID],
    ['HUBSPOT_CLIENT_SECRET', e.HUBSPOT_CLIENT_SECRET],
  );
  // The journal is read with the app's client-credentials token.
  requireTogether(
    ['HUBSPOT_JOURNAL_MINUTES', e.HUBSPOT_JOURNAL_MINUTES],
    ['HUBSPOT_CLIENT_ID', e.HUBSPOT_CLIENT_ID],
  );
  return {
    clientId: e.HUBSPOT_CLIENT_ID,
    clientSecret: e.HUBSPOT_CLIENT_SECRET,
    accessToken: e.HUBSPOT_ACCESS_TOKEN,
    apiUrl: e.HUBSPOT_API_URL,
    authorizeUrl: e.HUBSPOT_AUTHORIZE_URL,
    apiVersion: e.HUBSPOT_API_VERSION,
    journalMinutes: e.HUBSPOT_JOURNAL_MINUTES,
  };
}
