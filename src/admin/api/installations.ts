import type { Router } from 'express';
import { recordViewOr404 } from '../record-view.js';
import { eventsQuerySchema } from '../schemas.js';
import { type ApiKit, installationParam, parse } from './kit.js';

/** The installations, one installation, one record, removing and approving an installation. */
export function addInstallationRoutes(router: Router, { ctx, actions, overview }: ApiKit): void {
  router.get('/installations', async (_req, res) => {
    res.json({ installations: await overview.list() });
  });

  router.get('/installations/:id', async (req, res) => {
    res.json(await overview.view(await actions.installation(installationParam(req))));
  });

  router.get('/installations/:id/records/:recordId', async (req, res) => {
    res.json(await recordViewOr404(ctx, installationParam(req), req.params.recordId));
  });

  router.delete('/installations/:id', async (req, res) => {
    const id = installationParam(req);
    res.json(await actions.remove(id));
  });

  router.post('/installations/:id/approve', async (req, res) => {
    res.json(await actions.approve(installationParam(req)));
  });
}

/** The recent events, each alert with its activity outcome per installation. */
export function addEventRoutes(router: Router, { ctx }: ApiKit): void {
  router.get('/events', async (req, res) => {
    const { limit } = parse(eventsQuerySchema, req.query, 'The query');
    const events = await ctx.events.recent(limit);
    const activities = await ctx.stores.alerts.outcomes(
      events.filter((e) => e.type === 'alert.fired').map((e) => e.id),
    );
    // An alert's activity outcome per installation (created, failed with reason, skipped), when one ran.
    res.json({
      events: events.map((e) => {
        const byInstallation = activities.get(e.id);
        return byInstallation ? { ...e, activities: Object.fromEntries(byInstallation) } : e;
      }),
    });
  });
}
