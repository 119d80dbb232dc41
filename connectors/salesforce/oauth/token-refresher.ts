import { RefreshRejectedError, type TokenRefresher } from '../../../src/auth/token-manager.js';
import type { SalesforceSettings } from '../config.js';
import { appCredentials } from '../connections/app-credentials.js';
import { ConnectionNotFoundError, type SalesforceConnectionStore } from '../connections/connections.js';
import { hostPolicyOf, SalesforceHostRefusedError } from '../hosts.js';
import { tokenResponseSchema } from './identity.js';
import { refreshAccessToken, SalesforceOAuthRefusal } from './oauth-client.js';

const refreshedTokensSchema = tokenResponseSchema.pick({ access_token: true, refresh_token: true });

/**
 * The refresh half of the web server flow, for the TokenManager (which makes sure it runs once per org across
 * processes: its Redis lock, then a re-read of the tokens, so a second process waiting on the lock takes the
 * tokens the first stored instead of spending the refresh token again). The installation's own connection
 * (External Client App) refreshes it when it names one, otherwise the global app.
 *
 * Salesforce answers `invalid_grant` when the refresh token was revoked, expired (the app's idle limit) or
 * already used under refresh token rotation: that becomes RefreshRejectedError so the installation turns
 * disconnected instead of being retried; so does a connection that was removed. Salesforce access tokens carry
 * no expiry (the org's session timeout decides), so the new token is used until it is refused. With rotation
 * every answer carries a new refresh token; without it none, and the TokenManager keeps the old one.
 */
export function createSalesforceTokenRefresher(
  config: SalesforceSettings,
  connections?: SalesforceConnectionStore,
): TokenRefresher {
  return async (tokens, installation) => {
    if (!tokens.refreshToken) throw new RefreshRejectedError('the installation has no refresh token');
    let app: Awaited<ReturnType<typeof appCredentials>>;
    try {
      app = await appCredentials(config, connections, installation.connectionId);
    } catch (err) {
      if (err instanceof ConnectionNotFoundError) {
        throw new RefreshRejectedError(
          `the Salesforce connection ${err.connectionId} it was installed through was removed`,
          'connection_removed',
        );
      }
      throw err;
    }
    // The org's own My Domain (its instance URL) serves the token endpoint for production and sandboxes alike.
    let raw: unknown;
    try {
      raw = await refreshAccessToken(
        app,
        installation.instanceUrl
          ? { url: installation.instanceUrl, role: 'instance URL' }
          : { url: app.loginUrl, role: 'login URL' },
        tokens.refreshToken,
        hostPolicyOf(config),
      );
    } catch (err) {
      // Not sent anywhere: the host is not Salesforce's. The installation needs a new install through a
      // Salesforce host (and the operator's approval of the change), not retries.
      if (err instanceof SalesforceHostRefusedError) {
        throw new RefreshRejectedError(`the refresh token was not sent: ${err.message}`, 'host_not_allowed');
      }
      if (err instanceof SalesforceOAuthRefusal && err.error === 'invalid_grant') {
        throw new RefreshRejectedError(
          `Salesforce refused the refresh token: ${err.message}`,
          'invalid_grant',
        );
      }
      throw err;
    }
    const fresh = refreshedTokensSchema.parse(raw);
    return {
      accessToken: fresh.access_token,
      ...(fresh.refresh_token ? { refreshToken: fresh.refresh_token } : {}),
    };
  };
}
