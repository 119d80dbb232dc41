import { setTimeout as sleep } from 'node:timers/promises';
import type { LocalSystem } from '../../local/system.js';
import type { ScoreVersions } from './score-versions.js';
import { runOf } from './system-state.js';

const CHANGE_EVERY_MS = 300;

/**
 * Re-scores the changed reports every 300 ms while a backfill runs: at least three versions, then more until
 * half the records are done or `maxVersions` is reached. A loop of its own, beside the test's loop of kills
 * and failovers: replacing a killed worker takes seconds on a loaded machine, and a CI run once saw a backfill
 * pass half-way during two restarts made in the same loop, with only two versions made.
 */
export class ScoreChanger {
  private stopped = false;
  private readonly loop: Promise<void>;

  constructor(system: LocalSystem, versions: ScoreVersions, maxVersions: number) {
    const companies = system.recordIds.length;
    this.loop = (async () => {
      while (!this.stopped && versions.versionCount < maxVersions) {
        // The run cannot be read while a test's failover is under way: no change this turn, since the run
        // may be past half by now.
        const done = await runOf(system).then(
          (run) => run?.totals.records ?? 0,
          () => undefined,
        );
        if (done !== undefined && versions.versionCount >= 3 && done >= companies / 2) return;
        if (done !== undefined) versions.bumpAll();
        await sleep(CHANGE_EVERY_MS);
      }
    })();
  }

  /** Ends the loop (at once when the backfill ended first) and waits for its last change. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }
}
