import type { SyncRuns } from '../storage/runs.js';
import type { Schedules } from './schedules.js';

/** Runs still open are found among this many of an installation's latest. */
const OPEN_RUNS_LOOKED_AT = 50;

/**
 * Stops an installation's scheduled work and open runs (it was disconnected or removed); its queued jobs then
 * stop on their own.
 */
export class InstallationStop {
  constructor(
    private readonly schedules: Schedules,
    private readonly runs: SyncRuns,
  ) {}

  async stop(installationId: string, reason = 'the installation was disconnected'): Promise<void> {
    await this.schedules.stopPoll(installationId);
    for (const run of await this.runs.recent(installationId, OPEN_RUNS_LOOKED_AT)) {
      if (run.state === 'listing' || run.state === 'processing') await this.runs.stop(run.id, reason);
    }
  }
}
