import { CrmBadRequestError } from '../../../src/crm/errors.js';
import type { RequestGate } from '../../../src/crm/request-gate.js';
import type { Installation, InstallationStore } from '../../../src/installations/store.js';
import { HubSpotHttp } from '../api/api-client.js';
import { accountDetailsRequest } from '../api/endpoints.js';
import { validTimeZone } from '../api/portal-clock.js';
import { accountDetailsSchema } from '../api/wire.js';
import { staticAccessToken } from '../create-connector.js';
import { HUBSPOT_KIND, HUBSPOT_PROVIDER, type HubSpotApiVersion } from '../provider.js';

export interface HubSpotPrivateAppConfig {
  /** `HUBSPOT_API_URL`. */
  apiUrl: string;
  /** `HUBSPOT_ACCESS_TOKEN`. */
  accessToken: string;
  /** `HUBSPOT_API_VERSION`. */
  apiVersion?: HubSpotApiVersion;
  gate?: RequestGate;
}

export interface HubSpotAccount {
  portalId: string;
  /** IANA time zone of the portal, when HubSpot names one Intl knows. */
  timeZone: string | undefined;
}

/** Reads the portal a token belongs to and its time zone (`GET /account-info/<version>/details`). */
export async function readHubSpotAccount(cfg: HubSpotPrivateAppConfig): Promise<HubSpotAccount> {
  const http = new HubSpotHttp({
    apiUrl: cfg.apiUrl,
    tokens: staticAccessToken(cfg.accessToken),
    gate: cfg.gate,
    ...(cfg.apiVersion ? { apiVersion: cfg.apiVersion } : {}),
  });
  const res = await http.request(accountDetailsRequest(http.paths));
  const parsed = accountDetailsSchema.safeParse(res.body);
  if (!parsed.success) {
    throw new CrmBadRequestError(
      "HubSpot's account details did not include a portalId",
      HUBSPOT_PROVIDER,
      res.status,
    );
  }
  return { portalId: parsed.data.portalId, timeZone: validTimeZone(parsed.data.timeZone) };
}

/**
 * Private-app mode: one installation from `HUBSPOT_ACCESS_TOKEN` (mode `token`, no refresh token, no expiry).
 * Idempotent: the installation id derives from the portal id, so a restart updates the same installation.
 */
export async function ensureHubSpotPrivateAppInstallation(
  cfg: HubSpotPrivateAppConfig,
  store: InstallationStore,
): Promise<Installation> {
  const { portalId, timeZone } = await readHubSpotAccount(cfg);
  return store.upsert({
    crm: HUBSPOT_KIND,
    externalId: portalId,
    ...(timeZone ? { timeZone } : {}),
    mode: 'token',
    tokens: { accessToken: cfg.accessToken },
  });
}
