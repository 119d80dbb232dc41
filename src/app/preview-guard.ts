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

/**
 * A preview of an installation nobody let in yet changes nothing in its CRM, not even its schema: the
 * connector's fields the CRM lacks read as empty (the connector's `withAbsentFieldsEmpty`), and a call that
 * would create them throws before it reaches the CRM.
 */
export function previewBeforeApproval(connector: CrmConnector, installationId: string): CrmConnector {
  const reading = connector.withAbsentFieldsEmpty?.() ?? connector;
  return new Proxy(reading, {
    get(target, prop, receiver) {
      if (prop === 'ensureFields') {
        return async () => {
          throw new PreviewWriteError(installationId, 'ensureFields');
        };
      }
      return Reflect.get(target, prop, receiver);
    },
  });
}
