import { describe, expect, it } from 'vitest';
import type { LocalCrmRecord } from '../local/system.js';
import type { CrmChange } from '../src/crm/connector.js';
import { crmChange } from '../src/pipeline/handlers/crm-change.js';
import { hubspotSlugEvent } from './support/hubspot-events.js';
import { suiteSystem } from './support/local-system.js';
import { realtimeIdle } from './support/realtime-idle.js';
import { waitFor } from './support/wait.js';

/**
 * Issue 26, point 8: HubSpot delivers events more than once and out of order, and the connector's own writes
 * come back as events. A repeated event id is dropped within the signature window; a slug event is compared
 * with the record's current value and with the connector's own last write before a link's provenance changes
 * or a decision is logged. End to end against the local HubSpot.
 */

const system = suiteSystem(
  { crm: 'hubspot', companies: 60 },
  {
    firstRunEnded: true,
    timeoutMs: 180_000,
    prepare: async () => {
      pool = records().filter((r) => r.slug && r.linkSource === 'auto');
    },
  },
);
let nextEventId = 880_000_001;
/** Auto-linked records, each used by one test only (a test's queued work may still run during the next). */
let pool: LocalCrmRecord[] = [];

function records(): LocalCrmRecord[] {
  return system.recordIds.map((id) => system.crm.record(id)!);
}

/** A record auto-linked to one slug, and another slug the record could be set to. */
function autoLinked(): [LocalCrmRecord, LocalCrmRecord] {
  const target = pool.shift()!;
  const index = pool.findIndex((r) => r.slug !== target.slug);
  const [other] = pool.splice(index, 1);
  expect(target.slug).not.toBe(other?.slug);
  return [target, other!];
}

/** A HubSpot `report_slug` change event as HubSpot signs and sends it. */
function slugEvent(recordId: string, value: string): Record<string, unknown> {
  return hubspotSlugEvent(nextEventId++, system.hubspot.portalId, recordId, value);
}

/** Decisions logged about one record (other tests' queued work may log about theirs meanwhile). */
async function decisionsFor(recordId: string): Promise<number> {
  return (await system.ctx.decisions.all(system.installationId)).filter((d) => d.recordId === recordId)
    .length;
}

async function slugChange(recordId: string, slug: string | null): Promise<void> {
  const change: CrmChange = { kind: 'slugChanged', recordId, slug, by: 'userId:4242' };
  await crmChange(system.ctx.pipeline, { installationId: system.installationId, change });
}

describe('HubSpot events delivered again, late or as our own echo', () => {
  it('the same signed event sent three times is queued once', async () => {
    const [target, other] = autoLinked();
    // A person's real change; the CRM holds it before HubSpot tells us.
    await system.hubspot.setCompanyProperty(target.id, 'report_slug', other.slug!);
    const queued: CrmChange[][] = [];
    const pipeline = system.ctx.pipeline;
    const original = pipeline.enqueueCrmChanges.bind(pipeline);
    pipeline.enqueueCrmChanges = async (installationId, changes) => {
      queued.push(changes);
      await original(installationId, changes);
    };
    try {
      const event = slugEvent(target.id, other.slug!);
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push((await system.hubspot.notify([event])).status);
      expect(answers).toEqual([204, 204, 204]);
      expect(queued.flat()).toEqual([
        { kind: 'slugChanged', recordId: target.id, slug: other.slug, by: 'userId:4242' },
      ]);
      // Another event of the same delivery is still taken in.
      const fresh = slugEvent(target.id, other.slug!);
      expect((await system.hubspot.notify([event, fresh])).status).toBe(204);
      expect(queued.flat()).toHaveLength(2);
    } finally {
      pipeline.enqueueCrmChanges = original;
    }
    // Applied once: the person's link, one decision, and nothing left to run that could log another.
    await waitFor(
      'the person’s change logged',
      async () => ((await decisionsFor(target.id)) > 0 ? true : undefined),
      30_000,
      50,
    );
    await realtimeIdle(system, { looks: 3, timeoutMs: 30_000, everyMs: 100 });
    expect(system.crm.record(target.id)?.linkSource).toBe('person');
    expect(await decisionsFor(target.id)).toBe(1);
  }, 60_000);

  it('an earlier write of ours arriving late leaves our current auto link as it is, and logs nothing', async () => {
    const [target, other] = autoLinked();
    // HubSpot delivers, after the event of our current write, one about a value the record held before.
    await slugChange(target.id, other.slug);
    expect(system.crm.record(target.id)).toMatchObject({ slug: target.slug, linkSource: 'auto' });
    expect(await system.ctx.index.autoLinkOf(system.installationId, target.id)).toBe(target.slug);
    expect(await decisionsFor(target.id)).toBe(0);
  }, 60_000);

  it('our own admin link echoed back stays the admin’s', async () => {
    const [target, other] = autoLinked();
    await system.ctx.records.resolveReview(system.installationId, target.id, {
      action: 'link',
      slug: other.slug!,
    });
    expect(system.crm.record(target.id)).toMatchObject({ slug: other.slug, linkSource: 'admin' });
    await slugChange(target.id, other.slug);
    await slugChange(target.id, other.slug);
    expect(system.crm.record(target.id)).toMatchObject({ slug: other.slug, linkSource: 'admin' });
    expect(await decisionsFor(target.id)).toBe(0);
  }, 60_000);

  it('a person’s change that the CRM holds is still theirs, logged once however often it arrives', async () => {
    const [target, other] = autoLinked();
    await system.hubspot.setCompanyProperty(target.id, 'report_slug', other.slug!);
    await slugChange(target.id, other.slug);
    await slugChange(target.id, other.slug);
    expect(system.crm.record(target.id)).toMatchObject({ slug: other.slug, linkSource: 'person' });
    expect(await system.ctx.index.autoLinkOf(system.installationId, target.id)).toBeNull();
    const decisions = (await system.ctx.decisions.all(system.installationId)).filter(
      (d) => d.recordId === target.id,
    );
    expect(decisions).toHaveLength(1);
    expect(decisions[0]).toMatchObject({ action: 'set', recordId: target.id, slug: other.slug });
  }, 60_000);

  it('a person’s slug typed with spaces around it is still theirs', async () => {
    const [target, other] = autoLinked();
    const typed = `  ${other.slug!} `;
    await system.hubspot.setCompanyProperty(target.id, 'report_slug', typed);
    await slugChange(target.id, typed);
    expect(system.crm.record(target.id)).toMatchObject({ linkSource: 'person' });
    expect(await system.ctx.index.autoLinkOf(system.installationId, target.id)).toBeNull();
  }, 60_000);
});
