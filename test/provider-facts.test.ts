import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY } from '../connectors/hubspot/api/api-client.js';
import { hubspotProvider } from '../connectors/hubspot/index.js';
import { salesforceProvider } from '../connectors/salesforce/index.js';
import { RETRY_DEFAULTS } from '../connectors/salesforce/provider.js';
import { FIELD_KEYS } from '../src/fields.js';
import { providers } from '../src/providers.js';

/** What the application reads from a provider instead of naming a CRM: complete, and what the clients use. */
describe.each(providers.map((p) => [p.kind, p] as const))('the %s provider', (_kind, provider) => {
  it('names every field of the field table, each differently', () => {
    expect(Object.keys(provider.fieldNames).sort()).toEqual([...FIELD_KEYS].sort());
    const names = Object.values(provider.fieldNames);
    expect(new Set(names).size).toBe(names.length);
  });

  it('says how finely its values compare and what an alert activity is', () => {
    expect(provider.limits.valueGrain.decimals).toBeGreaterThanOrEqual(0);
    expect(provider.limits.valueGrain.instantMs).toBeGreaterThan(0);
    expect(provider.activity.noun).not.toBe('');
    expect(provider.activity.needs).not.toBe('');
    expect(provider.manifestsName).not.toBe('');
    expect(Object.keys(provider.retryBudget).length).toBeGreaterThan(0);
  });
});

describe('retry budgets', () => {
  it('are the numbers each CRM client retries with', () => {
    expect(DEFAULT_RETRY_POLICY).toEqual(hubspotProvider.retryBudget.http?.budget);
    expect(RETRY_DEFAULTS).toMatchObject(salesforceProvider.retryBudget.http?.budget ?? { missing: 1 });
  });
});

describe('provider environment keys', () => {
  it("start with the provider's kind in capitals, as the CLI's help names them", () => {
    for (const provider of providers) {
      for (const key of Object.keys(provider.env.shape))
        expect(key).toMatch(new RegExp(`^${provider.kind.toUpperCase()}_`));
    }
  });
});
