import { describe, expect, it } from 'vitest';
import { installationTitle } from '../src/admin/views/format.js';
import { crmKind } from '../src/providers.js';

describe('installationTitle (issue 31: installations were named by id though the account name is known)', () => {
  it('names the account when the CRM said it, with its id', () => {
    expect(
      installationTitle({ crm: crmKind('hubspot'), externalId: '62515', accountName: 'acme.example' }),
    ).toBe('HubSpot portal acme.example (62515)');
    expect(installationTitle({ crm: crmKind('salesforce'), externalId: '00D000000000001' })).toBe(
      'Salesforce org 00D000000000001',
    );
  });
});
