import { hubspotProvider } from '../connectors/hubspot/index.js';
import { salesforceProvider } from '../connectors/salesforce/index.js';

/**
 * The CRMs this connector speaks to: the one place under src/ that imports connectors/. The server, bootstrap,
 * CLI, configuration and the local system loop over this list, so adding a CRM is a folder under connectors/
 * plus one line here.
 */
export const providers = [hubspotProvider, salesforceProvider] as const;

export type Provider = (typeof providers)[number];

/** Each provider's configuration section, under its kind (`config.hubspot`, `config.salesforce`). */
export type ProviderConfigs = { [P in Provider as P['kind']]: ReturnType<P['readConfig']> };

export function providerFor(kind: Provider['kind']): Provider {
  const provider = providers.find((p) => p.kind === kind);
  if (!provider) throw new Error(`no provider for CRM ${kind}`);
  return provider;
}
