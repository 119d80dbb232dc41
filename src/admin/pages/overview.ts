import type { Request, Router } from 'express';
import type { AppContext } from '../../app/context.js';
import { metricsRefresherFor } from '../../app/metrics-refresher.js';
import { type AdminLink, dashboardPage } from '../views/dashboard.js';
import { eventsPage } from '../views/misc-pages.js';
import { csrf, doneMessage, type PageKit, send } from './kit.js';

/** Queues without a worker as the metrics loop last read them (no Redis call here); none before its first read. */
function queuesWithoutWorkers(ctx: AppContext): string[] {
  const reading = metricsRefresherFor(ctx).workerReading();
  if (!reading) return [];
  return Object.entries(reading.perQueue)
    .filter(([, n]) => n === 0)
    .map(([queue]) => queue);
}

/** After an OAuth install that was let in (the callback's `installed=`), for the operator. */
function installedMessage(req: Request): string | null {
  const id = req.query.installed;
  if (typeof id !== 'string' || id === '') return null;
  return req.query.reconnected === '1'
    ? `Installation ${id} is reconnected; syncing resumes.`
    : `Installation ${id} is connected; its first sync has started.`;
}

/** The installations list (the admin's start page) and the recent events. */
export function addOverviewPages(pages: Router, kit: PageKit, links: readonly AdminLink[]): void {
  const { ctx, overview } = kit;
  pages.get('/', async (req, res) => {
    const views = (await overview.list()).map((v) => ({ ...v, approveCsrf: csrf(res) }));
    send(
      res,
      dashboardPage({
        views,
        csrfToken: csrf(res),
        notice: doneMessage(req) ?? installedMessage(req),
        queuesWithoutWorkers: queuesWithoutWorkers(ctx),
        links,
      }),
    );
  });

  pages.get('/events', async (_req, res) => {
    const events = await ctx.events.recent(200);
    const activities = await ctx.stores.alerts.outcomes(
      events.filter((e) => e.type === 'alert.fired').map((e) => e.id),
    );
    send(res, eventsPage({ events, activities, csrfToken: csrf(res) }));
  });
}
