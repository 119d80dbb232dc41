import { CrmDisconnectedError, CrmRevocationError } from '../../../src/crm/errors.js';
import type { RevokeInput } from '../../../src/crm/provider.js';
import { redactSecrets } from '../../../src/log.js';
import { HUBSPOT_DEFAULT_API_VERSION, HUBSPOT_PROVIDER, hubspotPaths } from '../provider.js';
import { type HubSpotOAuthClientConfig, tokenForm } from './oauth-tokens.js';

/**
 * Removing a HubSpot installation: the app is uninstalled from the portal (`DELETE /appinstalls/<version>/
 * external-install` with the portal's access token; HubSpot then emails the portal's super admins), and the
 * refresh token is revoked, so nothing this app held still opens the portal. The uninstall needs a valid access
 * token, so it goes first; the refresh token's revocation after it is a belt to those braces and may find the
 * token gone already.
 */

const WHAT_TO_DO =
  'Uninstall the app in HubSpot (Settings > Integrations > Connected apps) to end its access to the portal.';

export async function revokeHubSpotInstall(
  cfg: HubSpotOAuthClientConfig,
  input: RevokeInput,
): Promise<'revoked' | 'already_revoked'> {
  const paths = hubspotPaths(cfg.apiVersion ?? HUBSPOT_DEFAULT_API_VERSION);
  const call = async (path: string, init: RequestInit): Promise<Response> => {
    try {
      return await fetch(`${cfg.apiUrl}${path}`, { ...init, signal: input.signal });
    } catch (err) {
      throw new CrmRevocationError(
        `HubSpot could not be reached to uninstall the app: ${redactSecrets(String(err))}`,
        HUBSPOT_PROVIDER,
        WHAT_TO_DO,
        undefined,
        { cause: err },
      );
    }
  };

  let token: string;
  try {
    token = await input.accessToken.current();
  } catch (err) {
    // The refresh token was refused: HubSpot no longer knows this installation's tokens.
    if (err instanceof CrmDisconnectedError) return 'already_revoked';
    throw new CrmRevocationError(
      `No valid HubSpot access token to uninstall the app with: ${redactSecrets(String(err))}`,
      HUBSPOT_PROVIDER,
      WHAT_TO_DO,
      undefined,
      { cause: err },
    );
  }
  const uninstall = (bearer: string) =>
    call(paths.externalInstall, { method: 'DELETE', headers: { Authorization: `Bearer ${bearer}` } });
  let res = await uninstall(token);
  if (res.status === 401) {
    try {
      res = await uninstall(await input.accessToken.refreshAfterRejection(token));
    } catch (err) {
      if (err instanceof CrmDisconnectedError) return 'already_revoked';
      throw err;
    }
  }
  await res.body?.cancel();
  if (!res.ok) {
    throw new CrmRevocationError(
      `HubSpot refused to uninstall the app (${res.status})`,
      HUBSPOT_PROVIDER,
      WHAT_TO_DO,
      res.status,
    );
  }

  if (input.tokens.refreshToken) {
    const revoked = await call(paths.tokenRevoke, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(tokenForm(cfg, { kind: 'revoke', refreshToken: input.tokens.refreshToken })),
    });
    await revoked.body?.cancel();
    // 400: the uninstall already took the refresh token with it.
    if (!revoked.ok && revoked.status !== 400) {
      throw new CrmRevocationError(
        `HubSpot uninstalled the app but refused to revoke its refresh token (${revoked.status})`,
        HUBSPOT_PROVIDER,
        WHAT_TO_DO,
        revoked.status,
      );
    }
  }
  return 'revoked';
}
