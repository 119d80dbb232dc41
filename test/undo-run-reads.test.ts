import { describe, expect, it } from 'vitest';
import { AdminActions } from '../src/admin/admin-actions.js';
import type { AdminRequestError } from '../src/admin/errors.js';
import type { InstallationService } from '../src/app/installation-service.js';
import { crmKind, providerFor } from '../src/providers.js';
import { crmCalls, resetCalls } from './support/crm-calls.js';
import { suiteSystem } from './support/local-system.js';
import { runEnded } from './support/system-state.js';

/**
 * The undo of a run's links, previewed then confirmed, reads the CRM once per record for its plan: the preview
 * reads the run's records a page (the CRM's read size) at a time, and its confirmation plans from the preview's
 * kept read while the set still has the digest shown; the write's own batches read each record once more, and
 * leave alone a record whose slug changed in the CRM since the preview (unseen by the connector: no event).
 */

const ADMIN = { kind: 'admin-session' as const, id: 'abcdefabcdef', name: 'alice' };
const HUBSPOT = crmKind('hubspot');
const READ_SIZE = providerFor(HUBSPOT).limits.readBatchSize;

/** A local HubSpot of 300 companies after its first sync, the admin actions on it and that sync's run id. */
function syncedSystem() {
  const state = { runId: '', actions: undefined as unknown as AdminActions };
  const system = suiteSystem(
    { crm: HUBSPOT, companies: 300 },
    {
      timeoutMs: 240_000,
      prepare: async () => {
        state.runId = (await runEnded(system)).id;
        state.actions = new AdminActions(system.ctx, {} as InstallationService);
      },
    },
  );
  return { system, state, batchReads: () => crmCalls(system, HUBSPOT)['companies.batchRead'] ?? 0 };
}

describe('undo of a run: CRM reads of the preview and its confirmation', () => {
  const { system, state, batchReads } = syncedSystem();

  it('reads in pages of the read size, and the confirmation reads no record for its plan', async () => {
    const id = system.installationId;
    const { runId, actions } = state;
    const runLinks = await system.ctx.redis.hlen(system.ctx.keys.runLinks(id, runId));
    expect(runLinks).toBeGreaterThan(READ_SIZE);
    resetCalls(system, HUBSPOT);
    const preview = await actions.mass.preview(id, { kind: 'undo-run', runId });
    const previewReads = batchReads();
    expect(preview.count).toBeGreaterThan(READ_SIZE);
    expect(previewReads).toBe(Math.ceil(runLinks / READ_SIZE));
    // One call per page of the run's links (the stand-in answers 400 to a call of more than the read size).
    expect(crmCalls(system, HUBSPOT)).toEqual({ 'companies.batchRead': previewReads });

    resetCalls(system, HUBSPOT);
    const undo = await actions.undoRun(id, runId, ADMIN, preview.confirm);
    expect(undo.unlinked).toBe(preview.count);
    // Only the write's own batches read the records: one read per batch of the read size.
    expect(batchReads()).toBe(Math.ceil(preview.count / READ_SIZE));
  }, 120_000);
});

describe('undo of a run: what a confirmation from the kept read still refuses or leaves alone', () => {
  const { system, state, batchReads } = syncedSystem();

  it('refuses a set changed in sight, and leaves alone a record whose slug a person changed after the preview', async () => {
    const id = system.installationId;
    const { runId, actions } = state;
    const first = await actions.mass.preview(id, { kind: 'undo-run', runId });
    // A change the connector hears of (an admin's re-match, to the same slug, `auto` again): refused, with the
    // new set.
    const rematched = first.sample[0]!.recordId;
    await actions.rematch(id, rematched, ADMIN);
    const refused = await actions.undoRun(id, runId, ADMIN, first.confirm).catch((e: AdminRequestError) => e);
    expect(refused).toMatchObject({ status: 409, code: 'SET_CHANGED' });
    const preview = (refused as AdminRequestError).details.preview as typeof first;
    expect(preview.count).toBe(first.count - 1);

    // The new set's read is kept under the installation's keys, for minutes, until its confirmation.
    const kept = system.ctx.keys.undoRead(id, preview.confirm);
    expect(kept.startsWith(system.ctx.keys.inst(id))).toBe(true);
    expect(await system.ctx.redis.ttl(kept)).toBeGreaterThan(0);

    // A slug set in the CRM with no event: the connector cannot know of it before it writes.
    const shown = preview.sample.map((r) => r.recordId);
    const [quiet, beside] = shown;
    const other = system.crm.record(beside!)!.slug!;
    expect(other).not.toBe(system.crm.record(quiet!)!.slug);
    await system.hubspot.setCompanyProperty(quiet!, 'report_slug', other);

    resetCalls(system, HUBSPOT);
    const undo = await actions.undoRun(id, runId, ADMIN, preview.confirm);
    expect(undo).toMatchObject({ unlinked: preview.count - 1, kept: 2 });
    // Planned from the kept read: only the write's own batches read the records.
    expect(batchReads()).toBe(Math.ceil(preview.count / READ_SIZE));
    expect(system.crm.record(quiet!)).toMatchObject({ slug: other });
    expect(system.crm.record(rematched)).toMatchObject({ linkSource: 'auto' });
    expect(system.crm.record(beside!)).toMatchObject({ slug: null, status: 'no_match', linkSource: 'admin' });
    const logged = (await actions.mass.log.get(id, undo.massId!))!;
    expect(logged.records.map((r) => r.id)).not.toContain(quiet);
    expect(logged.done).toBe(preview.count - 1);
    expect(await system.ctx.redis.exists(kept)).toBe(0);
  }, 120_000);
});
