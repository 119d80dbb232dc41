import type { Router } from 'express';
import { badRequest } from '../errors.js';
import { deciderOf } from '../guard.js';
import { addMassPageRoutes } from '../mass-page-routes.js';
import { recordIdSchema, reviewDecisionSchema } from '../schemas.js';
import { afterActionQuery } from '../views/after-action.js';
import { tabPath } from '../views/installation-tabs.js';
import { body, changeOf, isRecordId, type PageKit, send } from './kit.js';

/** The review queue's decisions: in bulk and the undos (mass-page-routes.ts), then one record at a time. */
export function addReviewForms(pages: Router, kit: PageKit): void {
  const { ctx, actions, overview } = kit;
  const change = changeOf(kit.installationPages);
  // Before `/review/:recordId`, which would take `bulk` for a record id.
  addMassPageRoutes(pages, { ctx, actions, overview, send });

  pages.post(
    '/installations/:id/review/:recordId',
    change('review', async (req, id, res) => {
      const recordId = recordIdSchema.safeParse(req.params.recordId);
      if (!recordId.success) throw badRequest(recordId.error, 'The record id');
      const decision = reviewDecisionSchema.safeParse(req.body ?? {});
      if (!decision.success) throw badRequest(decision.error, 'The decision');
      await actions.resolveReview(id, recordId.data, decision.data, deciderOf(res));
      // Back to the same search and page, the message before the next item (after-action.ts).
      const done = decision.data.action === 'reject' ? 'review-rejected' : 'review-linked';
      return tabPath(id, 'review', afterActionQuery(body(req), done, recordId.data, isRecordId));
    }),
  );
}
