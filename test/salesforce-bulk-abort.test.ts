import { afterEach, describe, expect, it } from 'vitest';
import { createLocalSalesforce, type LocalSalesforceOptions } from '../connectors/salesforce/local/index.js';
import { CrmTransientError } from '../src/crm/errors.js';
import { connectLocalSalesforce } from './support/local-salesforce-connector.js';

/**
 * A Bulk API 2.0 job that does not finish within the connector's wait is aborted (PATCH state Aborted), so it
 * cannot still apply its rows after the batch was handed back for a retry. The local Salesforce applies a
 * job's rows only when the job completes; `finishBulkJobs` lets a job that outlived the wait complete.
 */

const running: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

async function setup(options: LocalSalesforceOptions) {
  const local = createLocalSalesforce(options);
  const connector = await connectLocalSalesforce(local, running, {
    bulk: { pollIntervalMs: 5, pollTimeoutMs: 80 },
  });
  await connector.ensureFields();
  return { local, connector };
}

describe('a Bulk API 2.0 job past its wait', () => {
  it('is aborted, and never applies its rows afterwards', async () => {
    const { local, connector } = await setup({ bulkChecksBeforeComplete: 1_000_000 });
    const accounts = local.seedAccounts(3);
    const error = await connector
      .writeCompaniesBulk(accounts.map((a) => ({ id: a.Id, values: { score: 42 } })))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CrmTransientError);
    expect((error as Error).message).toMatch(/aborted/);
    expect(local.counters()['bulk.setState']).toBe(2); // closed, then aborted

    local.finishBulkJobs(); // Salesforce would have finished it later
    for (const a of accounts) expect(local.getAccount(a.Id)?.custom.Report_Score__c ?? null).toBeNull();
  });

  it('a job that completes in time is read as before', async () => {
    const { local, connector } = await setup({ bulkChecksBeforeComplete: 2 });
    const accounts = local.seedAccounts(2);
    const results = await connector.writeCompaniesBulk(
      accounts.map((a) => ({ id: a.Id, values: { score: 7 } })),
    );
    expect(results.every((r) => r.ok)).toBe(true);
    expect(local.counters()['bulk.setState']).toBe(1);
    for (const a of accounts) expect(local.getAccount(a.Id)?.custom.Report_Score__c).toBe(7);
  });
});
