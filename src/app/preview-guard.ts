import type { CrmConnector } from '../crm/connector.js';
import { PreviewWriteError } from '../pipeline/errors.js';
import { guardDataWrites } from './data-write-guard.js';

/**
 * A preview promises to write nothing. The batch path already stops before its write step in a preview; this
 * makes the promise hold whatever a later change to that path does: every data write throws before it reaches
 * the CRM.
 */
export function refuseDataWrites<C extends CrmConnector>(connector: C, installationId: string): C {
  return guardDataWrites(connector, async (method) => new PreviewWriteError(installationId, method));
}
