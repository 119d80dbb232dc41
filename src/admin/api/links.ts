import type { Router } from 'express';
import { deciderOf } from '../guard.js';
import { dryRunQuerySchema, massBodySchema, massIdSchema, recordIdSchema } from '../schemas.js';
import { type ApiKit, dryRunAnswer, installationParam, parse } from './kit.js';

/** Corrections of links: unlink and match again one record, undo a run or a mass action. */
export function addLinkRoutes(router: Router, { actions }: ApiKit): void {
  router.post('/installations/:id/records/:recordId/unlink', async (req, res) => {
    const id = installationParam(req);
    const recordId = parse(recordIdSchema, req.params.recordId, 'The record id');
    res.json(await actions.unlink(id, recordId, deciderOf(res)));
  });

  router.post('/installations/:id/records/:recordId/rematch', async (req, res) => {
    const id = installationParam(req);
    const recordId = parse(recordIdSchema, req.params.recordId, 'The record id');
    res.json(await actions.rematch(id, recordId, deciderOf(res)));
  });

  router.post('/installations/:id/runs/:runId/undo', async (req, res) => {
    const id = installationParam(req);
    const runId = parse(recordIdSchema, req.params.runId, 'The run id');
    const { confirm } = parse(massBodySchema, req.body ?? {}, 'The confirmation');
    if (parse(dryRunQuerySchema, req.query, 'The query').dryRun) {
      res.json(dryRunAnswer(await actions.mass.preview(id, { kind: 'undo-run', runId })));
      return;
    }
    res.json(await actions.undoRun(id, runId, deciderOf(res), confirm));
  });

  router.get('/installations/:id/mass-actions', async (req, res) => {
    const id = installationParam(req);
    await actions.installation(id);
    res.json({ massActions: await actions.mass.log.recent(id) });
  });

  router.post('/installations/:id/mass-actions/:massId/undo', async (req, res) => {
    const id = installationParam(req);
    const massId = parse(massIdSchema, req.params.massId, 'The mass action id');
    const { confirm } = parse(massBodySchema, req.body ?? {}, 'The confirmation');
    const request = { kind: 'undo-mass' as const, massId };
    if (parse(dryRunQuerySchema, req.query, 'The query').dryRun) {
      res.json(dryRunAnswer(await actions.mass.preview(id, request)));
      return;
    }
    const { massId: newId, done, kept } = await actions.mass.apply(id, request, deciderOf(res), confirm);
    res.json({ massId: newId, undid: massId, restored: done, kept });
  });
}
