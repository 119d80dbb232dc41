/**
 * Upgrades from: deployments written before 2026-11-23 21:57 UTC, whose change polls were scheduled under the
 * job-id encoding of then (`poll-<legacyJobIdPart(id)>`, which kept '-'); the poll is scheduled under
 * `poll-<jobIdPart(id)>` now, and the old scheduler would poll beside it.
 * Can go when: every deployment is at schema version 5 or more (legacyJobIdPart stays while run-liveness.ts
 * looks for list jobs of runs started then).
 */
import type { AppContext } from '../app/context.js';
import { jobIdPart, legacyJobIdPart } from '../pipeline/queues.js';
import type { MigrationStep } from './step.js';

/** Removes each installation's poll scheduler named the old way; returns how many there were. */
export async function retirePollsUnderOldIds(
  ctx: Pick<AppContext, 'installations' | 'queues'>,
): Promise<number> {
  let retired = 0;
  for (const installation of await ctx.installations.list()) {
    const old = `poll-${legacyJobIdPart(installation.id)}`;
    if (old === `poll-${jobIdPart(installation.id)}`) continue;
    if (await ctx.queues.stopSchedule(old)) retired += 1;
  }
  return retired;
}

export const step: MigrationStep = {
  version: 5,
  name: 'change polls scheduled under the old job ids retired',
  run: async (ctx) => ({ retired: await retirePollsUnderOldIds(ctx) }),
};
