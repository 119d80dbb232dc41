import { CrmBadRequestError } from '../../src/crm/errors.js';
import type { RequestGate } from '../../src/crm/request-gate.js';
import type { Installation, InstallationStore } from '../../src/installations/store.js';
import { HubSpotHttp } from './api-client.js';
import { staticAccessToken } from './create-connector.js';
import { HUBSPOT_PATHS, HUBSPOT_PROVIDER } from './provider.js';
import { accountDetailsSchema } from './wire.js';

export interface HubSpotPrivateAppConfig {
  /** `HUBSPOT_API_URL`. */
  apiUrl: string;
  /** `HUBSPOT_ACCESS_TOKEN`. */
  accessToken: string;
  gate?: RequestGate;
}

/** Reads the portal id a token belongs to (`GET /account-info/v3/details` -> `portalId`). */
export async function readHubSpotPortalId(cfg: HubSpotPrivateAppConfig): Promise<string> {
  const http = new HubSpotHttp({
    apiUrl: cfg.apiUrl,
    tokens: staticAccessToken(cfg.accessToken),
    gate: cfg.gate,
  });
  const res = await http.request({ method: 'GET', path: HUBSPOT_PATHS.accountDetails });
  const parsed = accountDetailsSchema.safeParse(res.body);
  if (!parsed.success) {
    throw new CrmBadRequestError(
      "HubSpot's account details did not include a portalId",
      HUBSPOT_PROVIDER,
      res.status,
    );
  }
  return parsed.data.portalId;
}

/**
 * Private-app mode: one installation from `HUBSPOT_ACCESS_TOKEN` (mode `token`, no refresh token, no expiry).
 * Idempotent: the installation id derives from the portal id, so a restart updates the same installation.
 */
export async function ensureHubSpotPrivateAppInstallation(
  cfg: HubSpotPrivateAppConfig,
  store: InstallationStore,
): Promise<Installation> {
  const portalId = await readHubSpotPortalId(cfg);
  return store.upsert({
    crm: 'hubspot',
    externalId: portalId,
    mode: 'token',
    tokens: { accessToken: cfg.accessToken },
  });
}
