import { isLetIn } from '../installations/let-in.js';
import { providerFor } from '../providers.js';
import type { AppContext } from './context.js';

/**
 * At start-up, every installation that is let in gets the change poll its CRM asks for now (a poll interval
 * changed in the environment, or a poll switched on after it was installed, such as a webhooks journal). Scheduling
 * is an upsert of one repeatable job per installation, so running it again changes nothing.
 */
export async function schedulePolls(ctx: AppContext): Promise<number> {
  let scheduled = 0;
  for (const installation of await ctx.installations.list()) {
    if (!isLetIn(installation)) continue;
    const everyMs = providerFor(installation.crm).pollIntervalMs(ctx.config);
    if (everyMs === null) continue;
    await ctx.schedules.schedulePoll(installation.id, everyMs);
    scheduled++;
  }
  return scheduled;
}
