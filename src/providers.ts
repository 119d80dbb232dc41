import { z } from 'zod';
import { hubspotProvider } from '../connectors/hubspot/index.js';
import { salesforceProvider } from '../connectors/salesforce/index.js';
import { type CrmKind, providerKind } from './crm/kind.js';
import { UnknownCrmError } from './crm/unknown-crm-error.js';

/**
 * The provider registry: the CRMs this connector speaks to, and the one place under src/ that imports
 * connectors/ or names a CRM. The server, bootstrap, CLI, configuration and the local system loop over this
 * list, so adding a CRM is a folder under connectors/ plus one line here.
 */
export const providers = [hubspotProvider, salesforceProvider] as const;

export type Provider = (typeof providers)[number];

/** Each provider's configuration section, under its kind (`config[provider.kind]`). */
export type ProviderConfigs = { [P in Provider as P['kind']]: ReturnType<P['readConfig']> };

/** Every kind, in the registry's order (the first is the default where one is needed, as in `demo`). */
export const crmKinds: readonly CrmKind[] = providers.map((p) => providerKind(p.kind));

export function isCrmKind(value: string): value is CrmKind {
  return (crmKinds as readonly string[]).includes(value);
}

/** A string as a CrmKind when a provider of that kind is registered; throws UnknownCrmError otherwise. */
export function crmKind(value: string): CrmKind {
  if (!isCrmKind(value)) throw new UnknownCrmError(value, crmKinds);
  return value;
}

/** `crmKind` for zod boundaries (route parameters, stored entries that may name any CRM). */
export const crmKindSchema = z.custom<CrmKind>((v) => typeof v === 'string' && isCrmKind(v), {
  error: `expects ${crmKinds.join(' or ')}`,
});

export function providerFor(kind: CrmKind): Provider {
  const provider = providers.find((p) => p.kind === kind);
  if (!provider) throw new UnknownCrmError(kind, crmKinds);
  return provider;
}

/** The CRMs' names for people, as a sentence takes them: "A or B". */
export function crmLabels(): string {
  return providers.map((p) => p.label).join(' or ');
}

/** A registered provider's kind as a CrmKind (the provider object keeps its literal name for its config section). */
export function kindOf(provider: Provider): CrmKind {
  return providerKind(provider.kind);
}
