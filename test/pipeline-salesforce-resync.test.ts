import { describe, expect, it } from 'vitest';
import { suiteSystem } from './support/local-system.js';
import { runEnded } from './support/system-state.js';
import { waitFor } from './support/wait.js';

/**
 * An org whose change poll paused longer than Salesforce's delete log reaches back (15 days): the poll must
 * not fail for good, and a record deleted early in the pause (which neither queryAll, its recycle bin emptied
 * after 15 days, nor the delete log can show any more) must still leave the link index, through the full
 * listing the poll then starts.
 * The pause is the org's clock moved 16 days on at once; nothing sleeps for it.
 */

const DAY = 86_400_000;
// On the poll alone (an org without Change Data Capture): with the stream the deletion would arrive at once.
const system = suiteSystem(
  { crm: 'salesforce', companies: 60, env: { SALESFORCE_CHANGE_EVENTS: 'false' } },
  { firstRunEnded: true },
);

describe('a Salesforce poll paused for 16 days', () => {
  it('recovers, and forgets the records deleted meanwhile', async () => {
    const sf = system.salesforce!;
    const index = system.ctx.index;
    const installationId = system.installationId;
    await waitFor('the first poll to set its cursor', async () =>
      (await index.pollCursors.get(installationId)) ? true : undefined,
    );
    const linked = system.recordIds
      .map((id) => system.crm.record(id))
      .filter((r): r is NonNullable<typeof r> => r?.status === 'matched' && Boolean(r.slug));
    const gone = linked[0]!;
    const kept = linked[1]!;
    expect(await index.slugs.recordsForSlug(installationId, gone.slug!)).toContain(gone.id);
    const runsBefore = (await system.ctx.runs.recent(installationId, 20)).length;

    // One synchronous step, so no poll runs in between: a day on, the Account deleted, then 15 days more. The
    // recycle bin has let it go (queryAll no longer shows it) and its delete-log entry is outside the window.
    sf.advanceClock(DAY);
    sf.deleteAccount(gone.id);
    sf.advanceClock(15 * DAY);

    await waitFor(
      'the deleted Account to leave the index',
      async () =>
        (await index.slugs.recordsForSlug(installationId, gone.slug!)).includes(gone.id) ? undefined : true,
      60_000,
      100,
    );
    expect(await index.slugs.recordsForSlug(installationId, kept.slug!)).toContain(kept.id);
    const [resync] = await system.ctx.runs.recent(installationId, 1);
    expect((await system.ctx.runs.recent(installationId, 20)).length).toBe(runsBefore + 1);
    expect(resync?.kind).toBe('full');
    expect((await runEnded(system, resync!.id)).state).toBe('done');

    // The poll goes on from its new position: a later deletion is seen the ordinary way, and the org never
    // had to refuse a start.
    const later = linked[2]!;
    sf.deleteAccount(later.id);
    await waitFor(
      'a later deletion to leave the index',
      async () =>
        (await index.slugs.recordsForSlug(installationId, later.slug!)).includes(later.id) ? undefined : true,
      30_000,
      100,
    );
    expect(sf.counters()['getDeleted.refused'] ?? 0).toBe(0);
  });
});
