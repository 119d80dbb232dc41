import { step as loginCountersIntoUnits } from './001-login-counters-into-units.js';
import { step as approvalsRecorded } from './002-approvals-recorded.js';
import { step as linkIndexBucketed } from './003-link-index-bucketed.js';
import { step as statusCountsBuilt } from './004-status-counts-built.js';
import { step as pollsUnderOldIds } from './005-polls-under-old-ids.js';
import type { MigrationStep } from './step.js';

/**
 * Every upgrade step, in the order they run: by number. A new step takes the next number; a step deleted once
 * no deployment needs it leaves its number unused, never given again (a deployment's version names the last
 * step that ran on it).
 */
export const MIGRATIONS: readonly MigrationStep[] = [
  loginCountersIntoUnits,
  approvalsRecorded,
  linkIndexBucketed,
  statusCountsBuilt,
  pollsUnderOldIds,
];
