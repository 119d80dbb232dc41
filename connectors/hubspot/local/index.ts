/**
 * The local HubSpot: a test and demo tool, never pointed at by production configuration. Start it with
 * `createLocalHubSpot(options).listen()` and set HUBSPOT_API_URL to its URL (and HUBSPOT_AUTHORIZE_URL to
 * `${url}/oauth/authorize`, HUBSPOT_CLIENT_ID / _SECRET to the LOCAL_HUBSPOT_* values).
 */
export type { ChangeSource, LocalCompanySnapshot, PropertyChange, SeedCompany } from './company-store.js';
export {
  createLocalHubSpot,
  LOCAL_HUBSPOT_CLIENT_ID,
  LOCAL_HUBSPOT_CLIENT_SECRET,
  LOCAL_HUBSPOT_PORTAL_ID,
  LocalHubSpot,
  type LocalHubSpotOptions,
  type LocalHubSpotServer,
  type LocalHubSpotStats,
  type NotifyOptions,
  type WebhookDelivery,
} from './local-hubspot.js';
export type { LocalFaults } from './routes.js';
export { LocalHubSpotUsageError } from './usage-error.js';
