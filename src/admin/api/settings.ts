import type { Router } from 'express';
import {
  alertActivityBodySchema,
  fixtureWritesBodySchema,
  reportKeyBodySchema,
  syncBodySchema,
} from '../schemas.js';
import { type ApiKit, installationParam, jsonBody, parse } from './kit.js';

const RUNS_SHOWN = 20;

/** An installation's report key, syncs and their runs, its preview. */
export function addKeyAndSyncRoutes(router: Router, { ctx, actions }: ApiKit): void {
  router.post('/installations/:id/key', async (req, res) => {
    const id = installationParam(req);
    const { apiKey } = parse(reportKeyBodySchema, jsonBody(req), 'The key');
    res.json(await actions.setReportKey(id, apiKey));
  });

  // Back to the server's key (REPORTS_API_KEY): 409 NO_SERVER_KEY when it has none.
  router.delete('/installations/:id/key', async (req, res) => {
    res.json({ source: 'environment', ...(await actions.useServerKey(installationParam(req))) });
  });

  router.post('/installations/:id/sync', async (req, res) => {
    const id = installationParam(req);
    const { full } = parse(syncBodySchema, req.body ?? {}, 'The sync request');
    res.status(202).json(await actions.startSync(id, full ?? false));
  });

  router.post('/installations/:id/preview', async (req, res) => {
    res.status(202).json(await actions.startPreview(installationParam(req)));
  });

  router.get('/installations/:id/preview', async (req, res) => {
    const preview = await actions.latestPreview(installationParam(req));
    if (!preview) {
      res.status(404).json({
        error: 'No preview was made for this installation: POST to this address to start one.',
        code: 'NO_PREVIEW',
      });
      return;
    }
    res.json({ preview });
  });

  router.get('/installations/:id/runs', async (req, res) => {
    const id = installationParam(req);
    await actions.installation(id);
    res.json({ runs: await ctx.runs.recent(id, RUNS_SHOWN) });
  });
}

/** An installation's switches: fixture writes and alert activities. */
export function addSwitchRoutes(router: Router, { actions }: ApiKit): void {
  router.post('/installations/:id/fixture-writes', async (req, res) => {
    const id = installationParam(req);
    const { allow } = parse(fixtureWritesBodySchema, jsonBody(req), 'The setting');
    res.json(await actions.setAllowFixtureWrites(id, allow));
  });

  router.post('/installations/:id/alert-activity', async (req, res) => {
    const id = installationParam(req);
    const { on } = parse(alertActivityBodySchema, jsonBody(req), 'The setting');
    res.json(await actions.setAlertActivity(id, on));
  });
}
