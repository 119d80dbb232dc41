import type { Router } from 'express';
import { decisionsCsv, reviewCsv } from '../csv.js';
import { deciderOf } from '../guard.js';
import {
  bulkReviewSchema,
  decisionsQuerySchema,
  dryRunQuerySchema,
  recordIdSchema,
  reviewDecisionSchema,
} from '../schemas.js';
import { type ApiKit, csvName, dryRunAnswer, installationParam, jsonBody, parse, sendCsv } from './kit.js';

/** The review queue (JSON and CSV), its decisions in bulk and one at a time, and the decision log. */
export function addReviewRoutes(router: Router, { ctx, actions }: ApiKit): void {
  router.get('/installations/:id/review', async (req, res) => {
    const id = installationParam(req);
    await actions.installation(id);
    res.json({ items: await ctx.index.reviews.items(id) });
  });

  router.get('/installations/:id/review.csv', async (req, res) => {
    const id = installationParam(req);
    await actions.installation(id);
    sendCsv(res, csvName('review-queue', id), reviewCsv(await ctx.index.reviews.items(id)));
  });

  // Before `/review/:recordId`, which would take `bulk` for a record id.
  router.post('/installations/:id/review/bulk', async (req, res) => {
    const id = installationParam(req);
    const bulk = parse(bulkReviewSchema, jsonBody(req), 'The bulk decision');
    if (parse(dryRunQuerySchema, req.query, 'The query').dryRun) {
      res.json(dryRunAnswer(await actions.mass.preview(id, { kind: 'review', bulk })));
      return;
    }
    res.json(await actions.resolveReviews(id, bulk, deciderOf(res), bulk.confirm));
  });

  router.post('/installations/:id/review/:recordId', async (req, res) => {
    const id = installationParam(req);
    const recordId = parse(recordIdSchema, req.params.recordId, 'The record id');
    const decision = parse(reviewDecisionSchema, jsonBody(req), 'The decision');
    res.json(await actions.resolveReview(id, recordId, decision, deciderOf(res)));
  });

  router.get('/installations/:id/decisions', async (req, res) => {
    const id = installationParam(req);
    const { limit } = parse(decisionsQuerySchema, req.query, 'The query');
    await actions.installation(id);
    res.json({ decisions: await ctx.decisions.latest(id, limit) });
  });

  router.get('/installations/:id/decisions.csv', async (req, res) => {
    const id = installationParam(req);
    await actions.installation(id);
    sendCsv(res, csvName('decisions', id), decisionsCsv(await ctx.decisions.all(id)));
  });
}
