import type { Installation } from './store.js';

/**
 * Whether the installation may list, read and write: someone or something let it in, and that is recorded
 * (`approvedBy`). A status says how the installation is doing, not whether it was allowed to start. A module
 * of its own so that the connectors' OAuth routes can ask without loading the store (and the provider list).
 */
export function isLetIn(installation: Pick<Installation, 'approvedBy'>): boolean {
  return installation.approvedBy !== undefined;
}
