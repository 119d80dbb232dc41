import { createRequire } from 'node:module';

const load = createRequire(import.meta.url);

/**
 * A CommonJS package loaded on first use rather than when the module naming it is imported: a CRM's client
 * library (and what it pulls in) costs a one-shot CLI command that never calls that CRM hundreds of
 * milliseconds. Type-only imports name its types; this gives its values.
 */
export function lazyRequire<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => {
    loaded ??= load(name) as T;
    return loaded;
  };
}
