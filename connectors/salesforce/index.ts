/**
 * The Salesforce connector's public surface. Everything the pipeline, server and CLI need is exported here;
 * the local stand-in for tests and the demo lives in ./local/ and is imported from there.
 */
export { type Priority, type RetryPolicy, SalesforceApi, type SalesforceApiOptions } from './api-client.js';
export { type BulkOptions, bulkCsv, parseBulkError } from './bulk.js';
export { createSalesforceConnector, SalesforceConnector, type SalesforceConnectorDeps } from './connector.js';
export { ensureSalesforceFields } from './ensure-fields.js';
export { fieldAccessMessage, toRecordError } from './errors.js';
export {
  customFieldDefinition,
  FIELD_KIND_TO_SALESFORCE,
  permissionSetDefinition,
  type SalesforceFieldType,
  salesforceShape,
} from './field-types.js';
export { parseIdentityUrl, type SalesforceIdentity, verifyTokenSignature } from './identity.js';
export { isSalesforceId, toId18 } from './ids.js';
export { PLACEHOLDER_APP_URL, salesforceProjectFiles, writeSalesforceManifests } from './manifest.js';
export {
  createSalesforceOAuthRouter,
  SALESFORCE_OAUTH_ROUTES,
  type SalesforceOAuthDeps,
} from './oauth-routes.js';
export * from './provider.js';
export { normalizeDateTime, websiteToDomain } from './records.js';
export { soqlDateTime, soqlIdList, soqlQuote } from './soql.js';
export { ensureSalesforceTokenInstallation } from './token-install.js';
export { createSalesforceTokenRefresher } from './token-refresher.js';
export { SalesforceUsageTracker, type UsageTrackerOptions } from './usage.js';
