/**
 * The errors of the CRM contract. They are defined among the foundations (`src/crm-errors.ts`) so that the
 * token manager, below the contract, throws them without importing the contract back; connectors and the app
 * name them here.
 */
export * from '../crm-errors.js';
