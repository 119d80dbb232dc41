import { z } from 'zod';

declare const crmKindBrand: unique symbol;

/**
 * A CRM's name as the code, Redis keys, routes and flags spell it (`installation.crm`, `--crm`, the part before
 * `-` in an installation id). A branded string: a plain string from outside (a flag, a route, a setting)
 * becomes one through the provider registry (src/providers.ts, `crmKind`), which knows the CRMs there are; a
 * provider declares its own (`providerKind`), and a value this app stored is decoded as one
 * (`storedCrmKindSchema`).
 */
export type CrmKind = string & { readonly [crmKindBrand]: true };

/** Lower-case letters: what a kind may look like, so it fits in installation ids, paths and key names. */
export const CRM_KIND_PATTERN = /^[a-z]+$/;

/** A provider declared a kind that cannot be one (see CRM_KIND_PATTERN). */
export class InvalidCrmKindError extends Error {
  readonly code = 'INVALID_CRM_KIND';
  constructor(readonly value: string) {
    super(`a CRM kind is lower-case letters, not ${JSON.stringify(value)}`);
    this.name = 'InvalidCrmKindError';
  }
}

/**
 * A kind read back from Redis (an installation's `crm`), which only ever holds kinds the registry produced. It is
 * checked for its shape here rather than against the registry: the registry imports every connector, and the
 * stores the connectors use must not import it back. An unknown kind fails where its provider is looked up
 * (`providerFor`, UnknownCrmError).
 */
export const storedCrmKindSchema = z
  .string()
  .regex(CRM_KIND_PATTERN)
  .transform((kind) => kind as CrmKind);

/**
 * A provider's kind as the provider declares it (connectors/<crm>/provider.ts, and the registry reading its
 * providers' kinds). Outside strings become a kind through the registry (`crmKind`), which checks them.
 */
export function providerKind(kind: string): CrmKind {
  if (!CRM_KIND_PATTERN.test(kind)) throw new InvalidCrmKindError(kind);
  return kind as CrmKind;
}
