/**
 * Upgrades from: deployments written before 2026-11-26 15:55 UTC, whose installations have no status counts
 * (storage/status-counts.ts).
 * Can go when: every deployment is at schema version 4 or more; or sooner, since the first read of an
 * installation's counts builds them too (`StatusCounts.ensureBuilt`): the step only spares an admin's first
 * page that wait.
 */
import type { AppContext } from '../app/context.js';
import type { MigrationStep } from './step.js';

/**
 * Builds the counts of each installation written before they were kept, so that no admin's first page waits
 * for it. Idempotent; installations already built are one HGET each: a deployment of a release that keeps the
 * counts has them, as a new installation's first write marks them built.
 */
export async function buildStatusCounts(ctx: AppContext): Promise<number> {
  let built = 0;
  for (const installation of await ctx.installations.list()) {
    if (await ctx.index.statuses.isBuilt(installation.id)) continue;
    await ctx.index.statuses.ensureBuilt(installation.id);
    built += 1;
  }
  if (built > 0) ctx.logger.info({ built }, 'status counts built for installations written without them');
  return built;
}

export const step: MigrationStep = {
  version: 4,
  name: 'status counts built for installations written without them',
  run: async (ctx) => ({ built: await buildStatusCounts(ctx) }),
};
