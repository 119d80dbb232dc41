import type { NextFunction, Request, Response, Router } from 'express';
import { badRequest } from '../errors.js';
import type { AdminGuard } from '../guard.js';
import { recordIdSchema } from '../schemas.js';
import { readMultipartBody, readUploadForm } from '../uploads.js';
import { installationPath } from '../views/format.js';
import { changeOf, keepUpload, type PageKit, uploadOf } from './kit.js';

/** A report request for one record, with its optional document. */
export function addRequestForm(pages: Router, kit: PageKit): void {
  const change = changeOf(kit.installationPages);
  pages.post(
    '/installations/:id/records/:recordId/request',
    change('request', async (req, id) => {
      const recordId = recordIdSchema.safeParse(req.params.recordId);
      if (!recordId.success) throw badRequest(recordId.error, 'The record id');
      const upload = uploadOf(req);
      const outcome = await kit.actions.requestReport(id, recordId.data, upload);
      return installationPath(
        id,
        `?done=${outcome.existing ? 'report-request-pending' : 'report-requested'}#requests`,
      );
    }),
  );
}

/** The request form is multipart (it carries a file): read it before the pages' CSRF check looks at the body. */
export function addRequestUpload(
  router: Router,
  guard: AdminGuard,
  showLogin: (req: Request, res: Response, next: NextFunction) => void,
): void {
  router.post(
    '/installations/:id/records/:recordId/request',
    guard.requirePage(showLogin),
    readMultipartBody,
    async (req, _res, next) => {
      try {
        const form = await readUploadForm(req, 'document');
        req.body = form.fields;
        keepUpload(req, form.file);
        next();
      } catch (err) {
        next(err);
      }
    },
  );
}
