import { describe, expect, it } from 'vitest';
import { storedCrmKindSchema } from '../src/crm/kind.js';
import { UnknownCrmError } from '../src/crm/unknown-crm-error.js';
import { crmKind, crmKindSchema, crmKinds, isCrmKind, providerFor, providers } from '../src/providers.js';

describe('CrmKind, narrowed by the provider registry', () => {
  it('knows exactly the kinds of the registered providers', () => {
    expect(crmKinds).toEqual(providers.map((p) => p.kind));
    for (const kind of crmKinds) {
      expect(isCrmKind(kind)).toBe(true);
      expect(crmKind(kind)).toBe(kind);
      expect(providerFor(kind).kind).toBe(kind);
    }
  });

  it('refuses a string that names no registered CRM, with a coded error', () => {
    expect(isCrmKind('pipedrive')).toBe(false);
    expect(() => crmKind('pipedrive')).toThrow(UnknownCrmError);
    const thrown = (() => {
      try {
        crmKind('HubSpot');
      } catch (err) {
        return err;
      }
      return null;
    })();
    expect(thrown).toBeInstanceOf(UnknownCrmError);
    expect((thrown as UnknownCrmError).code).toBe('UNKNOWN_CRM');
    expect(crmKindSchema.safeParse('pipedrive').success).toBe(false);
    expect(crmKindSchema.safeParse(crmKinds[0]).success).toBe(true);
  });

  it('decodes a stored kind by its shape only', () => {
    expect(storedCrmKindSchema.safeParse(crmKinds[0]).success).toBe(true);
    expect(storedCrmKindSchema.safeParse('Not A Kind').success).toBe(false);
    expect(storedCrmKindSchema.safeParse('').success).toBe(false);
  });
});
