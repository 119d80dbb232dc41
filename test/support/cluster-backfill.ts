import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import type { LocalSystem } from '../../local/system.js';
import { staleRecords } from './end-state.js';
import { wrongRecords } from './expectations.js';
import { ScoreChanger } from './score-changer.js';
import { ScoreVersions } from './score-versions.js';
import { failedJobs, queuesIdle, runEnded, runOf } from './system-state.js';

/**
 * A backfill that lasts several seconds while the sandbox re-scores some reports, for the tests that break
 * something in the middle of it (a worker, a master), and the end-state checks they share: every record right,
 * nothing stale, nothing written from an older read after a newer one, no failed job.
 */

const MAX_VERSIONS = 15;

/** Slows the local CRM and the sandbox and picks the reports to re-score. */
export function slowDown(system: LocalSystem, changedSlugs = 6): ScoreVersions {
  system.hubspot.injectFaults({ latencyMs: 150 });
  system.sandbox.setFaults({ delayMs: 15 });
  const slugs = [
    ...new Set(system.seed.flatMap((c) => (c.expected.status === 'matched' ? [c.expected.slug] : []))),
  ].slice(0, changedSlugs);
  return new ScoreVersions(system.sandbox, slugs);
}

/**
 * Drives the backfill to its end while ScoreChanger re-scores the changed reports, calls `at` with the records
 * done and the run's state on each turn (it does the kills and failovers), then lets the last changes' events
 * land.
 */
export async function backfillWhile(
  system: LocalSystem,
  versions: ScoreVersions,
  at: (recordsDone: number, state: string | undefined) => Promise<void>,
): Promise<void> {
  const deadline = Date.now() + 180_000;
  const changes = new ScoreChanger(system, versions, MAX_VERSIONS);
  try {
    for (;;) {
      const run = await runOf(system);
      if (run?.state === 'done' || run?.state === 'stopped') break;
      if (Date.now() > deadline) throw new Error(`the backfill did not end in time: ${JSON.stringify(run)}`);
      await at(run?.totals.records ?? 0, run?.state);
      await sleep(50);
    }
  } finally {
    await changes.stop();
  }
  await system.sandbox.waitForDeliveries();
  await queuesIdle(system, 120_000);
  versions.finish();
  await system.sandbox.waitForDeliveries();
  await queuesIdle(system, 120_000);
}

function backwardWrites(system: LocalSystem, versions: ScoreVersions): string[] {
  const changed = new Set(versions.slugs);
  return system.recordIds.flatMap((id) => {
    const slug = system.hubspot.getCompany(id)?.properties.report_slug;
    return slug && changed.has(slug) ? versions.backwardWrites(system.hubspot, id, slug) : [];
  });
}

export async function expectRightEndState(
  system: LocalSystem,
  versions: ScoreVersions,
  context: string,
): Promise<void> {
  const run = await runEnded(system);
  expect(run.state, context).toBe('done');
  expect(run.recordsListed, context).toBe(system.recordIds.length);
  expect(run.totals.failed, context).toBe(0);
  expect(wrongRecords(system), context).toEqual([]);
  expect(staleRecords(system), context).toEqual([]);
  expect(backwardWrites(system, versions), context).toEqual([]);
  expect(await failedJobs(system), context).toBe(0);
  expect(versions.versionCount, context).toBeGreaterThanOrEqual(3);
}
