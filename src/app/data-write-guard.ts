import type { CrmConnector } from '../crm/connector.js';

/** The methods that put report data on CRM records. */
export const DATA_WRITES = new Set<PropertyKey>(['writeCompanies', 'writeCompaniesBulk', 'createActivity']);

/**
 * `connector` with its data writes behind `refuse`: each call asks first and throws the error it gets, or goes
 * ahead on null; everything else (reads, field setup) passes through. The fixture guard and the preview guard
 * are both this, with their own reason to refuse.
 */
export function guardDataWrites<C extends CrmConnector>(
  connector: C,
  refuse: (method: string) => Promise<Error | null>,
): C {
  return new Proxy(connector, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (!DATA_WRITES.has(prop) || typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        const refusal = await refuse(String(prop));
        if (refusal) throw refusal;
        return Reflect.apply(value, target, args);
      };
    },
  });
}
