import type { LocalSystem } from '../../local/system.js';
import type { CrmKind } from '../../src/crm/connector.js';

/**
 * Calls the system's CRM stand-in (local HubSpot or local Salesforce) has answered, by route, other than
 * OAuth's own (token, identity, userinfo): what the connector asked of the CRM itself.
 */
export function crmCalls(s: LocalSystem, crm: CrmKind): Record<string, number> {
  const calls = crm === 'hubspot' ? s.hubspot.stats().calls : s.salesforce!.counters();
  return Object.fromEntries(
    Object.entries(calls).filter(([route, n]) => n > 0 && !/^(oauth|identity|userinfo)/i.test(route)),
  );
}

/** Sets the stand-in's call counts back to zero. */
export function resetCalls(s: LocalSystem, crm: CrmKind): void {
  if (crm === 'hubspot') s.hubspot.resetStats();
  else s.salesforce!.resetCounters();
}
