import type { AppContext } from '../app/context.js';

/**
 * One upgrade of a deployment's stored state to the format the code reads, run once per deployment
 * (runner.ts). Each lives in a file of its own, `NNN-what-it-does.ts`, whose header says which deployments it
 * upgrades (`Upgrades from:`) and when it can be deleted (`Can go when:`); test/migrations.test.ts holds that.
 * A step must be safe on an empty deployment and safe to run again: a process that dies after a step did its
 * work but before the version was raised runs it once more at the next start.
 */
export interface MigrationStep {
  /** The file's number: a deployment is at this schema version once the step ran. */
  readonly version: number;
  /** What the log says it did. */
  readonly name: string;
  /** Does the upgrade; what it returns is logged. */
  run(ctx: AppContext): Promise<Record<string, unknown>>;
}
