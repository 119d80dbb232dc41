import { describe, expect, it } from 'vitest';
import { kickScoreChanges } from '../src/pipeline/score-changes/updates.js';
import { suiteSystem } from './support/local-system.js';
import { inboxEntry } from './support/report-webhooks.js';
import { waitFor } from './support/wait.js';

/**
 * Issue 30: a single change after a storm reaches the CRM within a second. The fan-out of the score-change inbox
 * pauses for a second after a take that held only a storm's marks (the storm's updates coalesce for seconds
 * anyway, and the pause leaves the CPU to the acknowledgements); a single change arriving in that pause waited
 * for it, most of its second. It is now fanned out during the pause, and the storm's marks still wait for it.
 */

const system = suiteSystem({ companies: 10, logLevel: 'silent' });

const entry = inboxEntry;

describe('the score-change fan-out', () => {
  it("fans a single change out while it pauses after a storm's take", async () => {
    const { inbox, queues, redis, keys } = system.ctx;
    const storm = 'storm-report-x';
    const single = 'quiet-report-y';
    // Marked before a fan-out runs, so its first take holds the storm's mark alone, with five events.
    for (let i = 0; i < 5; i++) await inbox.accept(entry(`msg_storm_${i}`, storm));
    await kickScoreChanges(queues);
    await waitFor(
      'the storm taken',
      async () => ((await inbox.waiting()) === 0 ? true : undefined),
      30_000,
      5,
    );
    // The storm goes on and a single change comes, within the fan-out's pause.
    for (let i = 5; i < 8; i++) await inbox.accept(entry(`msg_storm_${i}`, storm));
    await inbox.accept(entry('msg_single', single));
    await waitFor(
      'the single change taken',
      async () => ((await redis.zscore(keys.scoreInboxOrder(), single)) === null ? true : undefined),
      30_000,
      5,
    );
    // Before, the single change waited for the next whole take, which takes the storm's mark too.
    expect(await redis.zscore(keys.scoreInboxOrder(), storm)).not.toBeNull();
    await waitFor(
      'the storm taken again',
      async () => ((await inbox.waiting()) === 0 ? true : undefined),
      30_000,
    );
  });

  it('pauses for the storm after a take that also held a single change', async () => {
    const { inbox, queues, redis, keys } = system.ctx;
    const storm = 'storm-report-z';
    // The fan-out of the test before ends first (its last take finds nothing and clears the kick mark): two
    // fan-outs at once would take in turns.
    await waitFor(
      'no fan-out running',
      async () => ((await redis.exists(keys.scoreInboxKick())) === 0 ? true : undefined),
      30_000,
    );
    // The first take holds a storm's mark and a single change's: before, such a take was followed by a 300 ms
    // pause instead of the storm's second, so a storm beside single changes was fanned out several times a second.
    for (let i = 0; i < 5; i++) await inbox.accept(entry(`msg_stormz_${i}`, storm));
    await inbox.accept(entry('msg_single_z', 'quiet-report-z'));
    await kickScoreChanges(queues);
    await waitFor(
      'the first take',
      async () => ((await inbox.waiting()) === 0 ? true : undefined),
      30_000,
      5,
    );
    const takenAt = Date.now();
    for (let i = 5; i < 8; i++) await inbox.accept(entry(`msg_stormz_${i}`, storm));
    await waitFor(
      'the storm taken again',
      async () => ((await redis.zscore(keys.scoreInboxOrder(), storm)) === null ? true : undefined),
      30_000,
      5,
    );
    // The pause starts after the first take's fan-out ends, so it cannot have ended sooner than a second after
    // the take was seen (less the poll's 5 ms).
    expect(Date.now() - takenAt).toBeGreaterThanOrEqual(990);
  });

  it('the periodic sweep queues a realtime fan-out for stranded marks and fans out nothing itself', async () => {
    const { inbox, queues, redis, keys } = system.ctx;
    await waitFor(
      'no fan-out running',
      async () => ((await redis.exists(keys.scoreInboxKick())) === 0 ? true : undefined),
      30_000,
    );
    // Accepted, but the ingest died before it queued the fan-out: the kick mark says one is queued.
    expect(await inbox.accept(entry('msg_stranded', 'stranded-report'))).toBe('marked_kick');
    const sweep = async (id: string) => {
      const job = await queues.schedule.add('score-changes', {}, { jobId: id });
      await waitFor(
        `the sweep ${id} done`,
        async () => ((await job.getState()) === 'completed' ? true : undefined),
        30_000,
      );
    };
    // Before, the sweep drained the inbox itself, on the schedule lane (a killed one came back after 15 s).
    await sweep('sweep-while-kicked');
    expect(await inbox.waiting()).toBe(1);
    // The kick mark lapsed with no fan-out: stranded, so the sweep queues one on the realtime lane.
    await redis.del(keys.scoreInboxKick());
    await sweep('sweep-stranded');
    await waitFor(
      'the stranded mark fanned out',
      async () => ((await inbox.waiting()) === 0 ? true : undefined),
      30_000,
    );
  });
});
