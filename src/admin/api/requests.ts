import type { Router } from 'express';
import { recordIdSchema } from '../schemas.js';
import { readMultipartBody, readUploadForm } from '../uploads.js';
import { type ApiKit, installationParam, parse } from './kit.js';

/** Report requests: one record's (with its optional document) and the pending ones. */
export function addRequestRoutes(router: Router, { actions }: ApiKit): void {
  router.post('/installations/:id/records/:recordId/request', readMultipartBody, async (req, res) => {
    const id = installationParam(req);
    const recordId = parse(recordIdSchema, req.params.recordId, 'The record id');
    const { file } = await readUploadForm(req, 'document');
    const outcome = await actions.requestReport(id, recordId, file);
    res.status(202).json({
      submissionId: outcome.submissionId,
      existing: outcome.existing,
      state: outcome.request.state,
      requestedAt: outcome.request.requestedAt,
      document: outcome.request.document ?? null,
    });
  });

  router.get('/installations/:id/requests', async (req, res) => {
    res.json({ requests: await actions.pendingRequests(installationParam(req)) });
  });
}
