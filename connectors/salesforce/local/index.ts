/** A local Salesforce for tests and the demo (never for production data). */
export type { Faults, LocalSalesforceOptions, SeedAccount, StoredAccount } from './org.js';
export { createLocalSalesforce, type ListeningLocalSalesforce, LocalSalesforce } from './server.js';
