import { describe, expect, it } from 'vitest';
import { wrongRecords } from './support/expectations.js';
import { suiteSystem } from './support/local-system.js';
import { waitFor } from './support/wait.js';

const system = suiteSystem({ crm: 'salesforce', companies: 500 }, { firstRunEnded: true });

/** Accounts not deleted, as the connector wrote them. */
function liveRecords() {
  return system.recordIds
    .map((id) => system.crm.record(id))
    .filter((r): r is NonNullable<typeof r> => r !== undefined);
}

describe('the pipeline against the local Salesforce', () => {
  it('backfills every Account into its right state, in collections of up to 200', async () => {
    const [run] = await system.ctx.runs.recent(system.installationId, 1);
    expect(run?.state).toBe('done');
    expect(wrongRecords(system)).toEqual([]);
    const counters = system.salesforce!.counters();
    const collectionWrites = Object.entries(counters)
      .filter(([route]) => /collection|composite/i.test(route))
      .reduce((n, [, c]) => n + c, 0);
    expect(collectionWrites, JSON.stringify(counters)).toBeGreaterThanOrEqual(3);
    expect(collectionWrites, JSON.stringify(counters)).toBeLessThanOrEqual(4);
  });

  it('the change poll picks up a slug a person set and a score change reaches the Account', async () => {
    const unmatched = system.recordIds
      .map((id) => system.crm.record(id)!)
      .find((r) => r.status === 'no_match')!;
    const linked = system.recordIds.map((id) => system.crm.record(id)!).find((r) => r.status === 'matched')!;
    system.salesforce!.updateAccountAsPerson(unmatched.id, { Report_Slug__c: linked.slug });
    await waitFor(
      'the poll to enrich the Account',
      () => (system.crm.record(unmatched.id)?.status === 'matched' ? true : undefined),
      30_000,
      100,
    );
    const next = system.sandbox.getReport(linked.slug!)!.score.overall + 2.5;
    system.sandbox.updateReport(linked.slug!, { score: { overall: next } });
    await waitFor(
      'score.changed to reach both Accounts',
      () =>
        system.crm.record(unmatched.id)?.score === next && system.crm.record(linked.id)?.score === next
          ? true
          : undefined,
      15_000,
      50,
    );
  });

  it('a deleted Account leaves the index within one poll', async () => {
    const records = liveRecords();
    const linked = records.find((r) => r.status === 'matched' && r.slug)!;
    const sf = system.salesforce!;
    const index = system.ctx.index;
    expect(await index.slugs.recordsForSlug(system.installationId, linked.slug!)).toContain(linked.id);
    const pollsBefore = sf.counters().queryAll ?? 0;
    sf.deleteAccount(linked.id);
    await waitFor(
      'the deleted Account to leave the index',
      async () =>
        (await index.slugs.recordsForSlug(system.installationId, linked.slug!)).includes(linked.id)
          ? undefined
          : true,
      15_000,
      50,
    );
    // The poll under way when the delete happened may miss it; the next one must not.
    expect((sf.counters().queryAll ?? 0) - pollsBefore).toBeLessThanOrEqual(2);
  });

  it('the survivor of a merge takes the link of the Account merged into it', async () => {
    const records = liveRecords();
    const loser = records.find((r) => r.status === 'matched' && r.slug)!;
    const survivor = records.find((r) => r.status === 'no_match' && !r.slug)!;
    const sf = system.salesforce!;
    const index = system.ctx.index;
    const pollsBefore = sf.counters().queryAll ?? 0;
    // The person keeps the survivor's values: its empty slug would lose the link without the connector.
    sf.mergeAccounts(survivor.id, [loser.id]);
    await waitFor(
      'the survivor to carry the link',
      () => (system.crm.record(survivor.id)?.slug === loser.slug ? true : undefined),
      15_000,
      50,
    );
    await waitFor(
      'the index to move the link',
      async () => {
        const members = await index.slugs.recordsForSlug(system.installationId, loser.slug!);
        return members.includes(survivor.id) && !members.includes(loser.id) ? true : undefined;
      },
      15_000,
      50,
    );
    expect(system.crm.record(survivor.id)?.status).toBe('matched');
    expect((sf.counters().queryAll ?? 0) - pollsBefore).toBeLessThanOrEqual(3);
  });
});
