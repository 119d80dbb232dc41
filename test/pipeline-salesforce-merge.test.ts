import { afterEach, describe, it } from 'vitest';
import { suiteSystem } from './support/local-system.js';
import { runEnded } from './support/system-state.js';
import { waitFor } from './support/wait.js';

/**
 * A merge in Salesforce moves the loser's link to the survivor. From the moment the survivor carries the link
 * on the record, every event of that report must reach it: an alert (field and Task), a score change. The
 * report service answers slowly here (3 s a call), which holds the merge's own update of the survivor open
 * while the event arrives: the moment where neither the loser nor the survivor stood in the link index.
 */

const SLOW_MS = 3_000;
const WITHIN_MS = 10_000;
const system = suiteSystem(
  { crm: 'salesforce', companies: 120 },
  {
    firstRunEnded: true,
    prepare: (started) => started.ctx.installations.setAlertActivity(started.installationId, true),
  },
);

afterEach(() => {
  system.sandbox.clearFaults();
});

function records() {
  return system.recordIds
    .map((id) => system.crm.record(id))
    .filter((r): r is NonNullable<typeof r> => r !== undefined);
}

const used = new Set<string>();

/** Merges a matched Account (its report linked to no other) into an unlinked one; waits for the link to move. */
async function mergeAndWaitForLink(slowMs = SLOW_MS, keepLoserSlug = false) {
  const all = records();
  const perSlug = new Map<string, number>();
  for (const r of all) if (r.slug) perSlug.set(r.slug, (perSlug.get(r.slug) ?? 0) + 1);
  const loser = all.find(
    (r) => r.status === 'matched' && r.slug && perSlug.get(r.slug) === 1 && !used.has(r.id),
  )!;
  const survivor = all.find((r) => r.status === 'no_match' && !r.slug && !used.has(r.id))!;
  used.add(loser.id);
  used.add(survivor.id);
  if (slowMs > 0) system.sandbox.setFaults({ delayMs: slowMs });
  system.salesforce!.mergeAccounts(
    survivor.id,
    [loser.id],
    keepLoserSlug ? { Report_Slug__c: loser.slug! } : undefined,
  );
  await waitFor(
    'the survivor to carry the link',
    () => (system.crm.record(survivor.id)?.slug === loser.slug ? true : undefined),
    15_000,
    10,
  );
  return { survivor, slug: loser.slug! };
}

describe('the survivor of a Salesforce merge', () => {
  it('gets an alert of its merged-in report sent right after the merge, field and Task', async () => {
    const { survivor, slug } = await mergeAndWaitForLink();
    system.sandbox.emitEvent('alert.fired', { slug, kind: 'risk', title: 'Merged risk', severity: 'high' });
    const deadline = Date.now() + WITHIN_MS;
    await waitFor(
      'the alert on the survivor',
      () => (system.crm.record(survivor.id)?.alert?.includes('Merged risk') ? true : undefined),
      WITHIN_MS,
      50,
    );
    await waitFor(
      'the alert as a Task on the survivor',
      () => (system.salesforce!.org.tasksFor(survivor.id).length === 1 ? true : undefined),
      Math.max(0, deadline - Date.now()),
      50,
    );
  });

  it('gets an alert sent once the link has moved, as the field Report_Alert__c', async () => {
    const { survivor, slug } = await mergeAndWaitForLink(0);
    await runEnded(system);
    system.sandbox.emitEvent('alert.fired', { slug, kind: 'risk', title: 'After the move', severity: 'low' });
    await waitFor(
      'the alert on the survivor',
      () => (system.crm.record(survivor.id)?.alert?.includes('After the move') ? true : undefined),
      WITHIN_MS,
      50,
    );
    await waitFor(
      'the alert as a Task on the survivor',
      () => (system.salesforce!.org.tasksFor(survivor.id).length === 1 ? true : undefined),
      WITHIN_MS,
      50,
    );
  });

  it("gets an alert when the merge kept the loser's slug on the survivor", async () => {
    const { survivor, slug } = await mergeAndWaitForLink(0, true);
    await runEnded(system);
    system.sandbox.emitEvent('alert.fired', { slug, kind: 'risk', title: 'Kept slug', severity: 'low' });
    await waitFor(
      'the alert on the survivor',
      () => (system.crm.record(survivor.id)?.alert?.includes('Kept slug') ? true : undefined),
      WITHIN_MS,
      50,
    );
    await waitFor(
      'the alert as a Task on the survivor',
      () => (system.salesforce!.org.tasksFor(survivor.id).length === 1 ? true : undefined),
      WITHIN_MS,
      50,
    );
  });

  it('gets a score change of its merged-in report sent right after the merge', async () => {
    const { survivor, slug } = await mergeAndWaitForLink();
    const next = system.sandbox.getReport(slug)!.score.overall + 1.5;
    system.sandbox.updateReport(slug, { score: { overall: next } });
    await waitFor(
      'the new score on the survivor',
      () => (system.crm.record(survivor.id)?.score === next ? true : undefined),
      WITHIN_MS,
      50,
    );
  });
});
