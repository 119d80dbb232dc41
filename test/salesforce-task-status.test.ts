import { afterEach, describe, expect, it } from 'vitest';
import { createLocalSalesforce } from '../connectors/salesforce/local/index.js';
import { connectLocalSalesforce } from './support/local-salesforce-connector.js';

/**
 * An alert's Task is created closed in the org's own closed status, read from TaskStatus (orgs rename
 * `Completed`), once per installation; a status renamed after it was read is read again, not failed on.
 */

const running: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

async function setup() {
  const local = createLocalSalesforce({});
  const connector = await connectLocalSalesforce(local, running);
  return { local, connector };
}

const activity = (n: number) => ({
  subject: `Report alert ${n}`,
  body: 'Score fell',
  at: '2026-11-20T10:00:00Z',
});

describe('the closed Task status', () => {
  it('is read from TaskStatus once, and again after an admin renamed it', async () => {
    const { local, connector } = await setup();
    local.renameTaskStatus('Completed', 'Done');
    const [account] = local.seedAccounts(1);
    await connector.createActivity(account!.Id, activity(1));
    await connector.createActivity(account!.Id, activity(2));
    expect(local.org.tasksFor(account!.Id).map((t) => t.Status)).toEqual(['Done', 'Done']);
    expect(local.counters().query).toBe(1); // one TaskStatus query for both

    local.renameTaskStatus('Done', 'Closed by the connector');
    await connector.createActivity(account!.Id, activity(3));
    expect(local.org.tasksFor(account!.Id).map((t) => t.Status)).toEqual([
      'Done',
      'Done',
      'Closed by the connector',
    ]);
    expect(local.counters().query).toBe(2);
  });
});
