import { describe, expect, it } from 'vitest';
import type { LocalCrmRecord, LocalSystem } from '../local/system.js';
import { AdminMassActions } from '../src/admin/mass-actions.js';
import type { CrmKind } from '../src/crm/connector.js';
import { deleteByPattern } from '../src/redis.js';
import { suiteSystem } from './support/local-system.js';
import { runEnded } from './support/system-state.js';
import { waitFor } from './support/wait.js';

/**
 * Human decisions stick (issue 17), end to end on each CRM against the local system: a person's clear and an
 * admin's unlink survive full syncs, undoing a run takes back only that run's auto-links, and the index is
 * rebuilt from the CRM alone after the connector's Redis keys are gone.
 */

function records(system: LocalSystem): LocalCrmRecord[] {
  return system.recordIds.map((id) => system.crm.record(id)!);
}

/** What a person sees of each record, minus the sync stamp. */
function linkState(system: LocalSystem): string[] {
  return records(system).map((r) => `${r.id}|${r.slug}|${r.status}|${r.linkSource}|${r.score}`);
}

async function fullSync(system: LocalSystem) {
  const runId = await system.ctx.pipeline.startSync(system.installationId, 'full');
  return runEnded(system, runId);
}

/** A person clears the record's slug in the CRM, the way the CRM tells the connector. */
async function personClearsSlug(system: LocalSystem, id: string): Promise<void> {
  if (system.crm.kind === 'hubspot') {
    await system.hubspot.setCompanyProperty(id, 'report_slug', '', { notify: true });
  } else {
    system.salesforce!.updateAccountAsPerson(id, { Report_Slug__c: null });
  }
}

describe.each(['hubspot', 'salesforce'] as CrmKind[])('provenance on %s', (crm) => {
  const system = suiteSystem({ crm, companies: 120 }, { firstRunEnded: true, timeoutMs: 180_000 });

  it('writes report_link_source auto with every link matching made', () => {
    // The seed holds a few slugs set by hand before the install: those are the person's.
    const linked = records(system).filter((r) => r.slug);
    expect(linked.filter((r) => r.linkSource === 'auto').length).toBeGreaterThan(10);
    for (const r of linked) expect(['auto', 'person'], r.id).toContain(r.linkSource);
    for (const r of records(system).filter((x) => !x.slug)) expect(r.linkSource, r.id).toBeNull();
  });

  it('a person clearing an auto-link stays unlinked after the next full sync', async () => {
    const target = records(system).find((r) => r.status === 'matched' && r.linkSource === 'auto')!;
    await personClearsSlug(system, target.id);
    await waitFor(
      'the clear to be recorded as the person’s decision',
      () => (system.crm.record(target.id)?.linkSource === 'person' ? true : undefined),
      30_000,
      100,
    );
    await fullSync(system);
    const after = system.crm.record(target.id)!;
    expect(after.slug).toBeNull();
    expect(after.status).toBe('no_match');
    expect(after.linkSource).toBe('person');
  }, 120_000);

  it('an admin unlink sticks through a full sync', async () => {
    const target = records(system).find((r) => r.status === 'matched' && r.linkSource === 'auto')!;
    await system.ctx.records.unlinkRecords(system.installationId, [target.id]);
    expect(system.crm.record(target.id)).toMatchObject({
      slug: null,
      status: 'no_match',
      linkSource: 'admin',
    });
    await fullSync(system);
    expect(system.crm.record(target.id)).toMatchObject({
      slug: null,
      status: 'no_match',
      linkSource: 'admin',
    });
  }, 120_000);

  it('undoing a run takes back the auto-links it made and nothing else', async () => {
    const runs = await system.ctx.runs.recent(system.installationId, 20);
    const first = runs[runs.length - 1]!;
    const before = records(system);
    const linkedByRun = before.filter((r) => r.linkSource === 'auto' && r.slug);
    // A person sets another slug on one of the run's links: that record is theirs now and stays.
    const personal = linkedByRun[0]!;
    const other = linkedByRun.find((r) => r.slug !== personal.slug)!;
    if (crm === 'hubspot') {
      await system.hubspot.setCompanyProperty(personal.id, 'report_slug', other.slug!, { notify: true });
    } else {
      system.salesforce!.updateAccountAsPerson(personal.id, { Report_Slug__c: other.slug });
    }
    await waitFor(
      'the person’s slug to be recorded as theirs',
      () => (system.crm.record(personal.id)?.linkSource === 'person' ? true : undefined),
      30_000,
      100,
    );
    const mass = new AdminMassActions(system.ctx, async (id) => (await system.ctx.installations.get(id))!);
    const outcome = await mass.apply(
      system.installationId,
      { kind: 'undo-run', runId: first.id },
      { kind: 'admin-token', id: null },
    );
    expect(outcome.done).toBe(linkedByRun.length - 1);
    for (const r of before) {
      const now = system.crm.record(r.id)!;
      if (r.id === personal.id) {
        expect(now).toMatchObject({ slug: other.slug, linkSource: 'person', status: 'matched' });
      } else if (linkedByRun.includes(r)) {
        expect(now, r.id).toMatchObject({ slug: null, status: 'no_match', linkSource: 'admin' });
      } else {
        expect(`${now.slug}|${now.status}|${now.linkSource}`, r.id).toBe(
          `${r.slug}|${r.status}|${r.linkSource}`,
        );
      }
    }
    await fullSync(system);
    for (const r of linkedByRun.slice(1)) expect(system.crm.record(r.id)?.slug, r.id).toBeNull();
  }, 120_000);

  it('after the connector’s Redis keys are deleted a full sync rebuilds the same state and changes no link', async () => {
    const before = linkState(system);
    const stamps = records(system).map((r) => r.syncedAt);
    const coverage = await system.ctx.index.coverage(system.installationId);
    const reviewCount = await system.ctx.index.reviews.count(system.installationId);
    await deleteByPattern(system.ctx.redis, system.ctx.keys.instPattern(system.installationId));
    expect(await system.ctx.index.reviews.count(system.installationId)).toBe(0);
    const run = await fullSync(system);
    expect(linkState(system)).toEqual(before);
    expect(records(system).filter((r, i) => r.syncedAt !== stamps[i])).toEqual([]);
    expect(run.totals.written).toBe(0);
    expect(await system.ctx.index.coverage(system.installationId)).toEqual(coverage);
    expect(await system.ctx.index.reviews.count(system.installationId)).toBe(reviewCount);
  }, 120_000);
});
