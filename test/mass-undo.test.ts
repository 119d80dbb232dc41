import { describe, expect, it } from 'vitest';
import type { LocalCrmRecord, LocalSystem } from '../local/system.js';
import { AdminActions } from '../src/admin/admin-actions.js';
import type { AdminRequestError } from '../src/admin/errors.js';
import { type MassPreview, topTied } from '../src/admin/mass-actions.js';
import type { InstallationService } from '../src/app/installation-service.js';
import { crmKind } from '../src/providers.js';
import { suiteSystem } from './support/local-system.js';
import { runEnded } from './support/system-state.js';

/**
 * Issue 31: mass actions are previewed, bound to the set they showed, and undoable. Undoing a run's links and
 * then undoing that undo puts back every record's link and source exactly (300 records, the local CRM, real
 * Redis, both CRMs); a record an admin re-matched after the run is left alone, though the re-match wrote `auto` again.
 */

const ADMIN = { kind: 'admin-session' as const, id: 'abcdefabcdef', name: 'alice' };

function linkState(system: LocalSystem): string[] {
  return system.recordIds.map((id) => {
    const r = system.crm.record(id) as LocalCrmRecord;
    return `${r.id}|${r.slug}|${r.status}|${r.linkSource}|${r.score}`;
  });
}

describe.each(['hubspot', 'salesforce'])('undo a run, then undo the undo on %s', (crm) => {
  const system = suiteSystem(
    { crm: crmKind(crm), companies: 300 },
    {
      timeoutMs: 240_000,
      prepare: async () => {
        runId = (await runEnded(system)).id;
        // The service is not used by mass actions (sync, keys and approval are).
        actions = new AdminActions(system.ctx, {} as InstallationService);
      },
    },
  );
  let actions: AdminActions;
  let runId: string;

  it('previews the set, refuses a confirmation for another set, and leaves a record re-matched since alone', async () => {
    const id = system.installationId;
    const autoLinked = system.recordIds.filter((r) => system.crm.record(r)?.linkSource === 'auto');
    expect(autoLinked.length).toBeGreaterThan(100);
    const first: MassPreview = await actions.mass.preview(id, { kind: 'undo-run', runId });
    expect(first.count).toBe(autoLinked.length);
    expect(first.sample).toHaveLength(20);
    // Nothing changed by a preview.
    expect(system.recordIds.filter((r) => system.crm.record(r)?.linkSource === 'auto')).toEqual(autoLinked);

    // An admin re-matches one of the run's records: matching links it to the same slug, `auto` again.
    const rematched = autoLinked[0]!;
    const slugBefore = system.crm.record(rematched)!.slug;
    await actions.rematch(id, rematched, ADMIN);
    expect(system.crm.record(rematched)).toMatchObject({ slug: slugBefore, linkSource: 'auto' });

    // The confirmation of the first preview no longer names the set: refused, with the new one.
    const refused = await actions.undoRun(id, runId, ADMIN, first.confirm).catch((e: AdminRequestError) => e);
    expect(refused).toMatchObject({ status: 409, code: 'SET_CHANGED' });
    const second = (refused as AdminRequestError).details.preview as MassPreview;
    expect(second.count).toBe(autoLinked.length - 1);
    expect(second.leftAlone).toEqual({ touched: 1 });
    expect(second.sample.map((r) => r.recordId)).not.toContain(rematched);
  }, 120_000);

  it('restores exact links and sources after undo then undo of the undo', async () => {
    const id = system.installationId;
    const before = linkState(system);
    const preview = await actions.mass.preview(id, { kind: 'undo-run', runId });
    const undo = await actions.undoRun(id, runId, ADMIN, preview.confirm);
    expect(undo.unlinked).toBe(preview.count);
    expect(undo.kept).toBe(1);
    const after = linkState(system);
    expect(after.filter((s, i) => s !== before[i])).toHaveLength(preview.count);
    for (const s of after.filter((x, i) => x !== before[i]))
      expect(s).toMatch(/\|null\|no_match\|admin\|null$/);

    const log = await actions.mass.log.recent(id);
    expect(log[0]).toMatchObject({ id: undo.massId, kind: 'undo-run', done: preview.count, by: ADMIN });
    const back = await actions.mass.preview(id, { kind: 'undo-mass', massId: undo.massId! });
    expect(back.count).toBe(preview.count);
    const restored = await actions.mass.apply(
      id,
      { kind: 'undo-mass', massId: undo.massId! },
      ADMIN,
      back.confirm,
    );
    expect(restored).toMatchObject({ kind: 'restore', done: preview.count, kept: 0 });
    expect(linkState(system)).toEqual(before);
    // Each undo is logged per record with the admin's name and offered once.
    const latest = await system.ctx.decisions.latest(id, 1);
    expect(latest[0]).toMatchObject({ action: 'restore', by: { name: 'alice' } });
    await expect(actions.mass.preview(id, { kind: 'undo-mass', massId: undo.massId! })).rejects.toMatchObject(
      { code: 'ALREADY_UNDONE' },
    );

    // The undo of the undo is undoable in turn: the same records are unlinked again.
    const again = await actions.mass.apply(id, { kind: 'undo-mass', massId: restored.massId! }, ADMIN);
    expect(again.done).toBe(preview.count);
    expect(linkState(system)).toEqual(after);
  }, 180_000);

  it('undoes a bulk accept and a bulk reject: the review items, their candidates and rejected slugs come back', async () => {
    const id = system.installationId;
    const items = (await system.ctx.index.reviews.items(id)).filter((i) => !topTied(i));
    expect(items.length).toBeGreaterThanOrEqual(4);
    const [a, b, c, d] = items;
    const crmState = (ids: string[]) =>
      ids.map((r) => {
        const x = system.crm.record(r)!;
        return `${r}|${x.slug}|${x.status}|${x.linkSource}`;
      });
    const ids = [a!, b!, c!, d!].map((i) => i.recordId);
    const before = crmState(ids);

    const accepted = await actions.resolveReviews(
      id,
      { action: 'accept-first', recordIds: [a!.recordId, b!.recordId] },
      ADMIN,
    );
    const rejected = await actions.resolveReviews(
      id,
      { action: 'reject', recordIds: [c!.recordId, d!.recordId] },
      ADMIN,
    );
    expect([accepted.done, rejected.done]).toEqual([2, 2]);
    expect(await system.ctx.index.reviews.rejectedSlugs(id, c!.recordId)).toEqual(
      new Set(c!.candidates.map((x) => x.slug)),
    );

    for (const massId of [rejected.massId!, accepted.massId!]) {
      const undone = await actions.mass.apply(id, { kind: 'undo-mass', massId }, ADMIN);
      expect(undone.done).toBe(2);
    }
    expect(crmState(ids)).toEqual(before);
    const back = await system.ctx.index.reviews.itemsOf(id, ids);
    back.forEach((item, i) => {
      const was = [a!, b!, c!, d!][i]!;
      expect(
        item?.candidates.map((x) => [x.slug, x.score]),
        was.recordId,
      ).toEqual(was.candidates.map((x) => [x.slug, x.score]));
    });
    expect(await system.ctx.index.reviews.rejectedSlugs(id, c!.recordId)).toEqual(new Set());
  }, 120_000);
});
