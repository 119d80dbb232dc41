import { ensureSalesforceTokenInstallation } from '../../connectors/salesforce/index.js';
import type { Installation } from '../installations/store.js';
import type { AppContext } from './context.js';

/** SALESFORCE_INSTANCE_URL + SALESFORCE_ACCESS_TOKEN: one installation without OAuth. */
export function ensureSalesforceTokenMode(ctx: AppContext): Promise<Installation | null> {
  return ensureSalesforceTokenInstallation(ctx.config, ctx.installations);
}
