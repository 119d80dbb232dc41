import type { Installation } from '../installations/store.js';
import type { AppContext } from './context.js';

/** SALESFORCE_INSTANCE_URL + SALESFORCE_ACCESS_TOKEN: one installation without OAuth. */
export async function ensureSalesforceTokenMode(ctx: AppContext): Promise<Installation | null> {
  if (!ctx.config.salesforce.accessToken || !ctx.config.salesforce.instanceUrl) return null;
  throw new Error('Salesforce token mode is not wired in yet');
}
