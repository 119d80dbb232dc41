/**
 * The HubSpot connector's public surface. Everything the pipeline, server and CLI need is exported here;
 * the local stand-in for tests and the demo lives in ./local/ and is imported from there.
 */

export {
  DEFAULT_RETRY_POLICY,
  HubSpotHttp,
  type HubSpotHttpOptions,
  type RetryPolicy,
} from './api-client.js';
export { HubSpotConnector } from './connector.js';
export {
  createHubSpotConnector,
  type HubSpotConnectorOptions,
  staticAccessToken,
} from './create-connector.js';
export { ensureHubSpotFields } from './ensure-fields.js';
export {
  HubSpotOAuthError,
  HubSpotPayloadError,
  type HubSpotPayloadFailure,
  HubSpotSignatureError,
  type HubSpotSignatureFailure,
  ValueConversionError,
} from './errors.js';
export {
  fromHubSpotValue,
  HUBSPOT_TYPE_BY_KIND,
  type HubSpotPropertyDefinition,
  hubspotPropertyDefinitions,
  hubspotPropertyGroup,
  toHubSpotValue,
} from './field-types.js';
export {
  HUBSPOT_MANIFEST_PLACEHOLDER_APP_URL,
  type HubSpotManifestOptions,
  hubspotProjectFiles,
  writeHubSpotManifests,
} from './manifest.js';
export {
  createHubSpotOAuthRouter,
  HUBSPOT_CALLBACK_PATH,
  HUBSPOT_INSTALL_PATH,
  type HubSpotOAuthRouterDeps,
  hubspotAuthorizeUrl,
  hubspotRedirectUri,
} from './oauth-routes.js';
export {
  createHubSpotTokenRefresher,
  exchangeHubSpotCode,
  type HubSpotOAuthClientConfig,
  type HubSpotTokenGrant,
  introspectHubSpotToken,
  refreshHubSpotTokens,
} from './oauth-tokens.js';
export * from './provider.js';
export {
  ensureHubSpotPrivateAppInstallation,
  type HubSpotPrivateAppConfig,
  readHubSpotPortalId,
} from './token-install.js';
export { type HubSpotEvent, parseHubSpotEvents, toCrmChanges } from './webhook-events.js';
export {
  createHubSpotWebhookRouter,
  HUBSPOT_WEBHOOK_PATH,
  type HubSpotWebhookRouterDeps,
} from './webhook-routes.js';
export {
  computeHubSpotSignatureV3,
  type HubSpotSignatureInput,
  hubspotSigningUri,
  verifyHubSpotSignatureV3,
} from './webhook-signature.js';
