import type { Request, Response, Router } from 'express';
import { AdminRequestError, badRequest } from '../errors.js';
import { deciderOf } from '../guard.js';
import { FORM_TAB } from '../installation-pages.js';
import { recordIdSchema } from '../schemas.js';
import { afterActionQuery, focusId, sentPlace } from '../views/after-action.js';
import { FORM_RECORD } from '../views/corrections.js';
import { installationTitle } from '../views/format.js';
import { tabPath } from '../views/installation-tabs.js';
import { unlinkConfirmPage } from '../views/unlink-confirm.js';
import { body, changeOf, csrf, installationId, isRecordId, type PageKit, send } from './kit.js';

/** The record id of a form's action, from the path or (for the look-up forms) from the form's field. */
function formRecordId(req: Request): string {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const raw = req.params.recordId === FORM_RECORD ? body.recordId : req.params.recordId;
  const recordId = recordIdSchema.safeParse(typeof raw === 'string' ? raw.trim() : raw);
  if (!recordId.success) throw badRequest(recordId.error, 'The record id');
  return recordId.data;
}

/**
 * A single unlink is shown first, like a mass action: the form without `confirm` answers the confirmation
 * page, whose form posts the same request with it.
 */
async function confirmUnlink(kit: PageKit, req: Request, res: Response, id: string, recordId: string) {
  const [installation, name, status, [slug = null]] = await Promise.all([
    kit.actions.installation(id),
    kit.installationPages.recordName(id, recordId),
    kit.ctx.index.statusOf(id, recordId),
    kit.ctx.index.slugsOf(id, [recordId]),
  ]);
  if (status === null && name === null) {
    throw new AdminRequestError(404, 'RECORD_NOT_FOUND', `The CRM has no record ${recordId}.`);
  }
  const form = body(req);
  const sent = typeof form.return === 'string' ? form.return : '';
  const place = sentPlace(form);
  const fields: [string, string][] = [['return', sent]];
  if (req.params.recordId === FORM_RECORD) fields.push(['recordId', recordId]);
  if (typeof form.next === 'string' && isRecordId(form.next)) fields.push(['next', form.next]);
  const view = await kit.overview.view(installation, { light: true });
  send(
    res,
    unlinkConfirmPage({
      installationId: id,
      installationTitle: installationTitle(view),
      recordId,
      name,
      slug,
      action: req.originalUrl.split('?')[0]!,
      fields,
      cancelHref: tabPath(
        id,
        'links',
        `${place.size > 0 ? `?${place}` : ''}#${req.params.recordId === FORM_RECORD ? 'corrections' : focusId(recordId)}`,
      ),
      csrfToken: csrf(res),
    }),
  );
}

/** The links tab's corrections: unlink (confirmed first) and match again. */
export function addLinkForms(pages: Router, kit: PageKit): void {
  const { actions, installationPages } = kit;
  const change = changeOf(installationPages);
  pages.post('/installations/:id/records/:recordId/unlink', async (req, res, next) => {
    const form = body(req);
    if (form.confirm === 'unlink') return next();
    const id = installationId(req);
    try {
      await confirmUnlink(kit, req, res, id, formRecordId(req));
    } catch (err) {
      if (!(err instanceof AdminRequestError) || err.code === 'INSTALLATION_NOT_FOUND') throw err;
      const page = await installationPages.render(FORM_TAB.links, req, id, csrf(res), {
        error: { form: 'links', message: err.message },
      });
      send(res, page, err.status);
    }
  });

  pages.post(
    '/installations/:id/records/:recordId/unlink',
    change('links', async (req, id, res) => {
      const recordId = formRecordId(req);
      await actions.unlink(id, recordId, deciderOf(res));
      return tabPath(id, 'links', afterActionQuery(body(req), 'unlinked', recordId, isRecordId));
    }),
  );

  pages.post(
    '/installations/:id/records/:recordId/rematch',
    change('links', async (req, id, res) => {
      const recordId = formRecordId(req);
      await actions.rematch(id, recordId, deciderOf(res));
      return tabPath(id, 'links', afterActionQuery(body(req), 'rematched', recordId, isRecordId));
    }),
  );
}
