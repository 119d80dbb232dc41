/**
 * `CrmKind` of the CRM contract. It is defined among the foundations (`src/crm-kind.ts`) so that the
 * installation store and the event log, below the contract, decode stored kinds without importing the contract
 * back; connectors and the registry name it here.
 */
export * from '../crm-kind.js';
