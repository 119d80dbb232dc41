import { describe, expect, it } from 'vitest';
import { ReplayStore } from '../connectors/salesforce/changes/replay-store.js';
import { ChangeStreams } from '../src/app/change-streams.js';
import { suiteSystem } from './support/local-system.js';
import { waitFor } from './support/wait.js';

/**
 * Change Data Capture end to end: the local Salesforce's Pub/Sub API, the worker's stream, the pipeline. The
 * change poll runs once an hour here, so what reaches a record in seconds came by the stream (or by the catch-up
 * poll a gap asks for, which the test counts).
 */

const system = suiteSystem(
  { crm: 'salesforce', companies: 60, env: { SALESFORCE_POLL_SECONDS: '3600' } },
  { firstRunEnded: true, prepare: (s) => streaming(s) },
);

async function streaming(s: typeof system): Promise<void> {
  const replay = new ReplayStore({ redis: s.ctx.redis, keys: s.ctx.keys });
  await waitFor(
    'the change stream to hold a position',
    async () => ((await replay.get(s.installationId)) ? true : undefined),
    20_000,
    50,
  );
}

function records() {
  return system.recordIds.map((id) => system.crm.record(id)).filter((r) => r !== undefined);
}

describe('Account changes by Change Data Capture', () => {
  it('a slug typed by a person reaches the Account in seconds, without a poll', async () => {
    const sf = system.salesforce!;
    const unmatched = records().find((r) => r.status === 'no_match' && !r.slug)!;
    const linked = records().find((r) => r.status === 'matched' && r.slug)!;
    const polls = sf.counters().queryAll ?? 0;
    const at = Date.now();
    sf.updateAccountAsPerson(unmatched.id, { Report_Slug__c: linked.slug });
    await waitFor(
      'the slug to link the Account',
      () => (system.crm.record(unmatched.id)?.status === 'matched' ? true : undefined),
      10_000,
      20,
    );
    expect(Date.now() - at).toBeLessThan(3_000);
    expect(sf.counters().queryAll ?? 0).toBe(polls);
    expect(system.crm.record(unmatched.id)?.linkSource).toBeTruthy();
  });

  it('a deleted Account leaves the index, and a gap event makes the poll catch up', async () => {
    const sf = system.salesforce!;
    const linked = records().find((r) => r.status === 'matched' && r.slug)!;
    const index = system.ctx.index;
    sf.deleteAccount(linked.id);
    await waitFor(
      'the deleted Account to leave the index',
      async () =>
        (await index.slugs.recordsForSlug(system.installationId, linked.slug!)).includes(linked.id)
          ? undefined
          : true,
      5_000,
      20,
    );
    const polls = sf.counters().queryAll ?? 0;
    sf.pubsub.publishGap('GAP_OVERFLOW');
    await waitFor(
      'the catch-up poll',
      () => ((sf.counters().queryAll ?? 0) > polls ? true : undefined),
      10_000,
      20,
    );
  });

  it('a stream started again resumes after its stored replay id: a change made while none ran arrives', async () => {
    const sf = system.salesforce!;
    const streams = system.ctx.changeStreams()!;
    expect(streams.running()).toEqual([system.installationId]);
    await streams.stop();
    const unmatched = records().find((r) => r.status === 'no_match' && !r.slug)!;
    const linked = records().find((r) => r.status === 'matched' && r.slug)!;
    sf.updateAccountAsPerson(unmatched.id, { Report_Slug__c: linked.slug });
    await new Promise((r) => setTimeout(r, 500));
    expect(system.crm.record(unmatched.id)?.status).toBe('no_match');

    const again = new ChangeStreams(system.ctx, { leaseMs: 2_000 });
    again.start();
    try {
      await waitFor(
        'the change made while stopped to link the Account',
        () => (system.crm.record(unmatched.id)?.status === 'matched' ? true : undefined),
        10_000,
        20,
      );
    } finally {
      await again.stop();
    }
  });
});
