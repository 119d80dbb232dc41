import type { CrmConnector } from '../crm/connector.js';
import { PreviewWriteError } from '../pipeline/errors.js';
import { DATA_WRITES } from './fixture-guard.js';

/**
 * A preview promises to write nothing. The batch path already stops before its write step in a preview; this
 * makes the promise hold whatever a later change to that path does: every data write throws before it reaches
 * the CRM.
 */
export function refuseDataWrites<C extends CrmConnector>(connector: C, installationId: string): C {
  return new Proxy(connector, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (!DATA_WRITES.has(prop) || typeof value !== 'function') return value;
      return async () => {
        throw new PreviewWriteError(installationId, String(prop));
      };
    },
  });
}
