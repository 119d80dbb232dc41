import { afterEach, describe, expect, it } from 'vitest';
import { decodeChangeCursor } from '../connectors/salesforce/cursors.js';
import { connectLocalSalesforce, localSalesforceAt } from './support/local-salesforce-connector.js';

/**
 * The change poll against the delete log's rules, which the local Salesforce enforces as Salesforce documents
 * them: a start older than the log's window (15 days, less after the recycle bin was emptied) is refused with
 * INVALID_REPLICATION_DATE, and start must precede end by a minute with seconds ignored. Time passes through
 * the org's injected clock; nothing sleeps.
 */

const DAY = 86_400_000;
const running: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

async function setup(start: string) {
  const { local, advance } = localSalesforceAt(start);
  const connector = await connectLocalSalesforce(local, running);
  await connector.ensureFields();
  return { local, connector, advance };
}

describe('the change poll and the delete log window', () => {
  it('after a 16-day pause it resyncs instead of failing, and reads the log again from now on', async () => {
    const { local, connector, advance } = await setup('2026-05-01T08:00:00Z');
    const [kept, gone, later] = local.seedAccounts(3);
    advance(5_000);
    const baseline = await connector.listChangedSince(null);
    advance(2 * 60_000);
    const before = await connector.listChangedSince(baseline.cursor);
    expect(before.resync).toBeUndefined();

    // Deleted and purged from the recycle bin during the pause: neither queryAll nor the log can show it.
    advance(DAY);
    local.deleteAccount(gone!.Id);
    local.purgeAccount(gone!.Id);
    advance(15 * DAY);
    const resumed = await connector.listChangedSince(before.cursor);
    expect(resumed.resync).toBe(true);
    expect(local.counters()['getDeleted.refused'] ?? 0).toBe(0); // clamped: the refused start was never sent
    const position = decodeChangeCursor(resumed.cursor);
    expect(Date.parse(position.d!)).toBeGreaterThan(local.org.now() - 15 * DAY);

    // From the new position the log works again: a later deletion is found by the next polls.
    advance(2 * 60_000);
    const settled = await connector.listChangedSince(resumed.cursor);
    expect(settled.resync).toBeUndefined();
    local.deleteAccount(later!.Id);
    local.purgeAccount(later!.Id);
    advance(2 * 60_000);
    const next = await connector.listChangedSince(settled.cursor);
    expect(next.resync).toBeUndefined();
    expect(next.changes).toEqual([{ kind: 'deleted', recordId: later!.Id }]);
    expect(local.getAccount(kept!.Id)).toBeDefined();
    expect(local.counters()['getDeleted.refused'] ?? 0).toBe(0);
  });

  it('an emptied recycle bin makes the org refuse the saved start: the position resets and a resync is asked', async () => {
    const { local, connector, advance } = await setup('2026-06-01T08:00:00Z');
    local.seedAccounts(2);
    advance(5_000);
    const baseline = await connector.listChangedSince(null);
    advance(3 * 60_000);
    local.emptyRecycleBin();
    advance(3 * 60_000);
    const refused = await connector.listChangedSince(baseline.cursor);
    expect(local.counters()['getDeleted.refused']).toBe(1);
    expect(refused.resync).toBe(true);
    advance(2 * 60_000);
    const again = await connector.listChangedSince(refused.cursor);
    expect(again.resync).toBeUndefined();
    expect(local.counters()['getDeleted.refused']).toBe(1);
  });

  it('follows the one-minute rule at any polling pace: seconds dropped, a read only a minute apart', async () => {
    const { local, connector, advance } = await setup('2026-07-01T08:00:50Z');
    local.seedAccounts(1);
    advance(1_000);
    let cursor = (await connector.listChangedSince(null)).cursor;
    for (let i = 0; i < 30; i++) {
      advance(13_000);
      const answer = await connector.listChangedSince(cursor);
      expect(answer.resync).toBeUndefined();
      cursor = answer.cursor;
    }
    expect(local.counters()['getDeleted.refused'] ?? 0).toBe(0);
    expect(local.counters().getDeleted).toBeGreaterThanOrEqual(5);
  });
});
