import type { Router } from 'express';
import type { AppContext } from '../app/context.js';
import type { InstallationService } from '../app/installation-service.js';

/** Salesforce OAuth routes, when a connected app is configured. */
export function salesforceOAuthRouter(_ctx: AppContext, _service: InstallationService): Router | null {
  return null;
}
