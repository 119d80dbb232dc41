import { randomBytes } from 'node:crypto';
import type { LocalSeedCompany, LocalStandIn, LocalStandInOptions } from '../../../src/crm/provider.js';
import { HUBSPOT_FIELDS, hubspotField } from '../fields/field-names.js';
import { HUBSPOT_WEBHOOK_PATH } from '../webhooks/webhook-routes.js';
import {
  createLocalHubSpot,
  LOCAL_HUBSPOT_CLIENT_ID,
  LOCAL_HUBSPOT_CLIENT_SECRET,
  type LocalHubSpot,
} from './local-hubspot.js';

/** A seed company as HubSpot company properties. */
export function hubspotSeedProperties(c: LocalSeedCompany): Record<string, string> {
  const props: Record<string, string> = { name: c.name };
  if (c.domain) props.domain = c.domain;
  if (c.country) props.country = c.country;
  if (c.city) props.city = c.city;
  if (c.industry) props.industry = c.industry;
  if (c.slug) props[hubspotField('slug').hubspot] = c.slug;
  return props;
}

/**
 * The local HubSpot as the provider's stand-in: a private-app token for token mode, the local OAuth app for the
 * OAuth routes, and signed webhooks sent to the connector's own route.
 */
export async function startHubSpotStandIn(
  options: LocalStandInOptions,
): Promise<LocalStandIn<'hubspot', LocalHubSpot>> {
  const privateAppToken = `pat-local-${randomBytes(8).toString('hex')}`;
  const hubspot = createLocalHubSpot({
    privateAppToken,
    ...(options.rateLimit ? { rateLimit: options.rateLimit } : {}),
    webhookUrl: `${options.appUrl}${HUBSPOT_WEBHOOK_PATH}`,
  });
  const listening = await hubspot.listen(0);
  const empty = (v: string | undefined) => (v === undefined || v === '' ? null : v);
  return {
    kind: 'hubspot',
    handle: hubspot,
    url: listening.url,
    env: {
      HUBSPOT_API_URL: listening.url,
      HUBSPOT_AUTHORIZE_URL: `${listening.url}/oauth/authorize`,
      HUBSPOT_CLIENT_ID: LOCAL_HUBSPOT_CLIENT_ID,
      HUBSPOT_CLIENT_SECRET: LOCAL_HUBSPOT_CLIENT_SECRET,
      HUBSPOT_ACCESS_TOKEN: privateAppToken,
    },
    workerEnv: {
      HUBSPOT_API_URL: listening.url,
      HUBSPOT_CLIENT_ID: LOCAL_HUBSPOT_CLIENT_ID,
      HUBSPOT_CLIENT_SECRET: LOCAL_HUBSPOT_CLIENT_SECRET,
    },
    // HubSpot keeps values of properties it does not know yet, so the fields can come after the seed.
    async seed(companies) {
      return hubspot.seedCompanies(companies.map(hubspotSeedProperties)).map((c) => c.id);
    },
    read(id) {
      const c = hubspot.getCompany(id);
      if (!c || c.deleted) return undefined;
      const p = c.properties;
      return {
        id,
        name: empty(p.name),
        fields: Object.fromEntries(HUBSPOT_FIELDS.map((f) => [f.key, empty(p[f.hubspot])])),
      };
    },
    close: () => listening.close(),
  };
}
