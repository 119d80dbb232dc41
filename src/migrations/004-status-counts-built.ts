import type { AppContext } from './context.js';

/**
 * Start-up upgrade of installations written before the status counts were kept (storage/status-counts.ts):
 * builds each one's counts once, in the background, so that no admin's first page waits for it (the first read
 * would build them too). Idempotent; installations already built are one HGET each.
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
