import { afterEach, describe, expect, it } from 'vitest';
import { decodeChangeCursor } from '../connectors/salesforce/changes/cursors.js';
import { createLogger, type Logger } from '../src/log.js';
import { connectLocalSalesforce, localSalesforceAt } from './support/local-salesforce-connector.js';

/**
 * The change poll against the delete log's rules, which the local Salesforce enforces as Salesforce documents
 * them: a start older than the log's window (15 days, less after the recycle bin was emptied) is refused with
 * INVALID_REPLICATION_DATE, start must precede end by more than a minute with seconds ignored, and a span with
 * more ids than the org answers for is refused with EXCEEDED_ID_LIMIT. Time passes through
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
    // A read needs more than one whole minute between start and end: about one every two minutes here.
    expect(local.counters().getDeleted).toBeGreaterThanOrEqual(2);
  });

  it('never sends a span of one minute exactly, which the org refuses (more than one minute is the rule)', async () => {
    const { local, connector, advance } = await setup('2026-07-02T08:00:10Z');
    local.seedAccounts(1);
    advance(1_000);
    const baseline = await connector.listChangedSince(null);
    // 08:00 to 08:01 once the seconds are dropped: one minute, not more.
    advance(60_000);
    const oneMinute = await connector.listChangedSince(baseline.cursor);
    expect(oneMinute.resync).toBeUndefined();
    expect(local.counters().getDeleted ?? 0).toBe(0);
    advance(60_000);
    const twoMinutes = await connector.listChangedSince(oneMinute.cursor);
    expect(twoMinutes.resync).toBeUndefined();
    expect(local.counters().getDeleted).toBe(1);
    expect(local.counters()['getDeleted.refused'] ?? 0).toBe(0);
    // What the poll avoided: the org refuses a span of one minute.
    expect(() =>
      local.org.deletedBetween(Date.parse('2026-07-02T08:00:10Z'), Date.parse('2026-07-02T08:01:10Z')),
    ).toThrow(/more than one minute/);
  });
});

describe('the change poll and the delete log id limit (EXCEEDED_ID_LIMIT)', () => {
  function capture(): { logger: Logger; warnings: { reason?: string; msg: string }[] } {
    const warnings: { reason?: string; msg: string }[] = [];
    const stream = {
      write(line: string) {
        const entry = JSON.parse(line) as { level: number; reason?: string; msg: string };
        if (entry.level === 40)
          warnings.push({ ...(entry.reason ? { reason: entry.reason } : {}), msg: entry.msg });
      },
    };
    return { logger: createLogger('info', stream), warnings };
  }

  it('narrows a span holding too many ids and goes on from where the narrowed read stopped, missing none', async () => {
    const { local, advance } = localSalesforceAt('2026-08-01T08:00:05Z', { deletedIdLimit: 3 });
    const { logger, warnings } = capture();
    const connector = await connectLocalSalesforce(local, running, { logger });
    await connector.ensureFields();
    const accounts = local.seedAccounts(8);
    advance(1_000);
    let cursor = (await connector.listChangedSince(null)).cursor;
    // A deletion a minute for eight minutes, out of the recycle bin at once: only the log shows them.
    for (const a of accounts) {
      advance(60_000);
      local.deleteAccount(a.Id);
      local.purgeAccount(a.Id);
    }
    advance(2 * 60_000);
    const found = new Set<string>();
    for (let poll = 0; poll < 10 && found.size < 8; poll++) {
      const answer = await connector.listChangedSince(cursor);
      expect(answer.resync).toBeUndefined();
      for (const c of answer.changes) if (c.kind === 'deleted') found.add(c.recordId);
      cursor = answer.cursor;
      advance(60_000);
    }
    expect([...found].sort()).toEqual(accounts.map((a) => a.Id).sort());
    expect(local.counters()['getDeleted.exceeded']).toBeGreaterThanOrEqual(1);
    expect(warnings).toEqual([]);
  });

  it('falls back to a full listing, with a log line naming the limit, when even a two-minute span holds too many', async () => {
    const { local, advance } = localSalesforceAt('2026-08-02T08:00:05Z', { deletedIdLimit: 3 });
    const { logger, warnings } = capture();
    const connector = await connectLocalSalesforce(local, running, { logger });
    await connector.ensureFields();
    const accounts = local.seedAccounts(6);
    advance(1_000);
    const baseline = await connector.listChangedSince(null);
    advance(3 * 60_000);
    for (const a of accounts.slice(0, 5)) {
      local.deleteAccount(a.Id);
      local.purgeAccount(a.Id);
    }
    advance(3 * 60_000);
    let cursor = baseline.cursor;
    let answer = await connector.listChangedSince(cursor);
    for (let poll = 0; poll < 6 && !answer.resync; poll++) {
      cursor = answer.cursor;
      advance(60_000);
      answer = await connector.listChangedSince(cursor);
    }
    expect(answer.resync).toBe(true);
    expect(warnings).toEqual([
      expect.objectContaining({
        reason: 'id-limit',
        msg: expect.stringMatching(/more ids than Salesforce answers/),
      }),
    ]);
    // Past the crowded minute: the next poll reads the log again without a refusal.
    advance(2 * 60_000);
    const after = await connector.listChangedSince(answer.cursor);
    expect(after.resync).toBeUndefined();
    expect(local.counters()['getDeleted.refused'] ?? 0).toBe(0);
  });
});
