import { OAuth2 } from 'jsforce';
import { RefreshRejectedError, type TokenRefresher } from '../../src/auth/token-manager.js';
import type { SalesforceSettings } from './config.js';
import { tokenResponseSchema } from './identity.js';

/**
 * The refresh half of the web server flow, for the TokenManager (which makes sure it runs once per org across
 * processes). Salesforce answers `invalid_grant` when the refresh token was revoked or the app uninstalled:
 * that becomes RefreshRejectedError so the installation turns disconnected instead of being retried.
 * Salesforce access tokens carry no expiry (the org's session timeout decides), so the new token is used until
 * it is refused; refresh tokens rotate only when the connected app says so, and the TokenManager keeps the old
 * one when none comes back.
 */
export function createSalesforceTokenRefresher(config: SalesforceSettings): TokenRefresher {
  return async (tokens, installation) => {
    const { clientId, clientSecret, loginUrl } = config.salesforce;
    if (!clientId || !clientSecret) {
      throw new Error(
        'SALESFORCE_CLIENT_ID and SALESFORCE_CLIENT_SECRET are needed to refresh Salesforce tokens',
      );
    }
    if (!tokens.refreshToken) throw new RefreshRejectedError('the installation has no refresh token');
    // The org's own My Domain (its instance URL) serves the token endpoint for production and sandboxes alike.
    const oauth2 = new OAuth2({ loginUrl: installation.instanceUrl ?? loginUrl, clientId, clientSecret });
    let raw: unknown;
    try {
      raw = await oauth2.refreshToken(tokens.refreshToken);
    } catch (err) {
      if (err instanceof Error && err.name === 'invalid_grant') {
        throw new RefreshRejectedError(
          `Salesforce refused the refresh token: ${err.message}`,
          'invalid_grant',
        );
      }
      throw err;
    }
    const fresh = tokenResponseSchema.pick({ access_token: true, refresh_token: true }).parse(raw);
    return {
      accessToken: fresh.access_token,
      ...(fresh.refresh_token ? { refreshToken: fresh.refresh_token } : {}),
    };
  };
}
