import { describe, expect, it } from 'vitest';
import { ReplayStore } from '../connectors/salesforce/changes/replay-store.js';
import { salesforceField } from '../connectors/salesforce/fields/field-names.js';
import type { LocalAccountChange } from '../connectors/salesforce/local/org.js';
import { CALL_OPTIONS_CLIENT, DEFAULT_API_VERSION } from '../connectors/salesforce/provider.js';
import { ChangeStreams } from '../src/app/change-streams.js';
import type { CrmChange } from '../src/crm/connector.js';
import { linked, recordsOf, slugTypedByHand, streaming } from './support/change-stream.js';
import { suiteSystem } from './support/local-system.js';
import { realtimeIdle } from './support/realtime-idle.js';
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

const records = () => recordsOf(system);

/** Waits until the connector's stream has queued the changes of every event published so far. */
async function streamCaughtUp(): Promise<void> {
  const replay = new ReplayStore({ redis: system.ctx.redis, keys: system.ctx.keys });
  const latest = system.salesforce!.pubsub.latestReplay;
  await waitFor(
    'the change stream to take every event',
    async () => ((await replay.get(system.installationId))?.readBigUInt64BE() ?? 0n) >= latest || undefined,
    10_000,
    20,
  );
}

describe('Account changes by Change Data Capture', () => {
  it('a slug typed by a person reaches the Account in seconds, without a poll', async () => {
    const sf = system.salesforce!;
    const polls = sf.counters().queryAll ?? 0;
    const at = Date.now();
    const recordId = slugTypedByHand(system);
    await linked(system, recordId);
    expect(Date.now() - at).toBeLessThan(3_000);
    expect(sf.counters().queryAll ?? 0).toBe(polls);
    expect(system.crm.record(recordId)?.linkSource).toBeTruthy();
  });

  it('the connector’s own writes come back under its client id and queue no change', async () => {
    const sf = system.salesforce!;
    // What an earlier test set off is taken first, so only this test's events can queue work below.
    await realtimeIdle(system, { looks: 3, timeoutMs: 30_000, everyMs: 100 });
    await streamCaughtUp();
    const all = records();
    const perSlug = new Map<string, number>();
    for (const r of all) if (r.slug) perSlug.set(r.slug, (perSlug.get(r.slug) ?? 0) + 1);
    const loser = all.find((r) => r.status === 'matched' && r.slug && perSlug.get(r.slug) === 1)!;
    const survivor = all.find((r) => r.status === 'no_match' && !r.slug)!;
    const mark = sf.pubsub.latestReplay;
    const ownUpdates: string[][] = [];
    const noteOwn = (c: LocalAccountChange) => {
      if (c.userId === sf.integrationUserId && c.changeType === 'UPDATE' && c.ids.includes(survivor.id))
        ownUpdates.push(c.changed);
    };
    sf.org.accountChangeListeners.add(noteOwn);
    const queued: CrmChange[] = [];
    const pipeline = system.ctx.pipeline;
    const original = pipeline.enqueueCrmChanges.bind(pipeline);
    pipeline.enqueueCrmChanges = async (installationId, changes) => {
      queued.push(...changes);
      await original(installationId, changes);
    };
    try {
      // A person's merge; the connector then carries the loser's link over (a write of the slug field alone) and
      // writes the survivor's report fields: both come back as change events.
      sf.mergeAccounts(survivor.id, [loser.id]);
      await waitFor(
        'the survivor to carry the link',
        () => {
          const now = system.crm.record(survivor.id);
          return now?.slug === loser.slug && now.syncedAt !== survivor.syncedAt ? true : undefined;
        },
        15_000,
        20,
      );
      await realtimeIdle(system, { looks: 3, timeoutMs: 30_000, everyMs: 100 });
      await streamCaughtUp();
    } finally {
      pipeline.enqueueCrmChanges = original;
      sf.org.accountChangeListeners.delete(noteOwn);
    }
    // Each write also carries the sync stamp (the carry-over too), so an echo without the client id is known.
    expect(ownUpdates.length).toBeGreaterThanOrEqual(2);
    for (const changed of ownUpdates) expect(changed).toContain(salesforceField('syncedAt').salesforce);
    const published = sf.pubsub.headersSince(mark).filter((h) => h.recordIds.includes(survivor.id));
    const own = published.filter((h) => h.commitUser === sf.integrationUserId);
    expect(own.length).toBeGreaterThanOrEqual(2);
    expect(new Set(own.map((h) => h.changeOrigin))).toEqual(
      new Set([`com/salesforce/api/rest/${DEFAULT_API_VERSION};client=${CALL_OPTIONS_CLIENT}`]),
    );
    expect(published.filter((h) => h.commitUser === sf.personUserId).map((h) => h.changeOrigin)).toEqual([
      '',
    ]);
    // The merge's change only: neither write of the connector comes back as work.
    expect(queued.map((c) => [c.kind, c.recordId])).toEqual([['merged', loser.id]]);
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

  it('renews its lease every tick, and reads the installations only once per refresh', async () => {
    const { ctx } = system;
    const counts = { lists: 0, renewals: 0 };
    // What the streams ask of the store and of Redis, counted: `list` reads every installation, and each
    // renewal is one script call (EVALSHA) on this connection.
    const installations = new Proxy(ctx.installations, {
      get(target, prop) {
        if (prop === 'list')
          return () => {
            counts.lists++;
            return target.list();
          };
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const redis = new Proxy(ctx.redis, {
      get(target, prop) {
        if (prop === 'evalsha') counts.renewals++;
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const streamsOf = (refreshMs: number) =>
      new ChangeStreams({ ...ctx, installations, redis }, { leaseMs: 2_000, tickMs: 50, refreshMs });

    const slow = streamsOf(60_000);
    slow.start();
    try {
      await waitFor('20 renewals', () => (counts.renewals >= 20 ? true : undefined), 10_000, 10);
      expect(slow.running()).toEqual([system.installationId]);
      expect(counts.lists).toBe(1);
    } finally {
      await slow.stop();
    }

    counts.lists = 0;
    const quick = streamsOf(200);
    quick.start();
    try {
      await waitFor('the list read again', () => (counts.lists >= 3 ? true : undefined), 10_000, 10);
      expect(quick.running()).toEqual([system.installationId]);
    } finally {
      await quick.stop();
    }
  });
});
