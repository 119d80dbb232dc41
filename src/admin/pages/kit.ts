import type { Request, Response } from 'express';
import type { AppContext } from '../../app/context.js';
import type { DocumentInput } from '../../reports/submissions.js';
import type { AdminActions } from '../admin-actions.js';
import { AdminRequestError } from '../errors.js';
import { adminOf } from '../guard.js';
import type { SafeHtml } from '../html.js';
import { FORM_TAB, type InstallationPages } from '../installation-pages.js';
import type { AdminOverview } from '../overview.js';
import { installationIdSchema, recordIdSchema } from '../schemas.js';
import type { PageForm } from '../views/installation-page.js';

/** What every group of admin pages is handed: the stores, the actions and the page helpers they share. */
export interface PageKit {
  ctx: AppContext;
  actions: AdminActions;
  overview: AdminOverview;
  installationPages: InstallationPages;
}

/** What a redirect's `?done=` stands for: fixed sentences, so a crafted link cannot put words on the page. */
const DONE_MESSAGES: Record<string, string> = {
  'key-saved': 'The report service accepted the key; it is saved (encrypted) and used from now on.',
  'key-server':
    "The installation's own key is forgotten: it uses the server's key (REPORTS_API_KEY) from now on.",
  'key-server-resumed':
    "The installation's own key is forgotten: it uses the server's key (REPORTS_API_KEY), and a full sync has started.",
  'key-saved-resumed':
    'The report service accepted the key; it is saved. The installation was stopped, so a full sync has started.',
  'review-linked': 'Linked: the report was written to the CRM record.',
  'review-rejected': 'Rejected: the candidates will not be offered again, and the CRM record was updated.',
  'sync-started': 'A sync has started; its progress shows below.',
  'sync-joined': 'A sync was already under way: yours joined it; its progress shows below.',
  'review-bulk-linked':
    'Accepted: each selected record is linked to its first candidate, and the CRM records were updated.',
  'review-bulk-rejected':
    'Rejected: the selected records’ candidates will not be offered again, and the CRM records were updated.',
  'review-bulk-empty':
    'Nothing was selected, so nothing was changed: tick the records to decide (or “Select all”), then choose the action.',
  'mass-none':
    'Nothing was changed: every record was left alone (decided meanwhile, tied candidates, or changed by a person since).',
  'review-bulk-partial':
    'Some selected records were not decided (resolved meanwhile, no candidate, top candidates tied: pick one yourself, or refused by the CRM); the rest were written. The decision log shows each record decided.',
  unlinked:
    'Unlinked: the record has no report now, by your decision, and will not be linked again by matching.',
  rematched:
    'Matched again: the record’s decision was lifted and matching ran; its new state is written to the CRM.',
  'run-undone': 'Undone: the run’s own links were taken back; records a person changed since kept theirs.',
  'report-requested':
    'Report requested: the record shows "requested" until the report service publishes it, then it is linked and scored.',
  'report-request-pending':
    'This record already waits for a requested report: that request stands, nothing new was sent.',
  'alert-activity-on': 'Alert activities are on: each alert also becomes an activity on every linked record.',
  'alert-activity-off': 'Alert activities are off: alerts only set the alert fields.',
  approved: 'Approved: the installation is set up and its first sync has started.',
  'preview-started':
    'A preview has started: records are matched and nothing is written. Its counts show below when it is done.',
  'fixture-writes-allowed':
    'Fixture writes are allowed for this installation: the sandbox key’s scores are written, and a full sync has started.',
  'fixture-writes-refused': 'Fixture writes are refused again for this installation.',
  disconnected:
    'The installation was disconnected: its jobs stopped and its tokens, key and link index were deleted.',
  'disconnected-revoked':
    "The installation was disconnected: the CRM ended the app's access, and its jobs, tokens, key and link index are gone here.",
  'logged-out': 'You are logged out.',
};

export function doneMessage(req: Request): string | null {
  const done = req.query.done;
  return typeof done === 'string' ? (DONE_MESSAGES[done] ?? null) : null;
}

/** The file of a request form, read before the CSRF check and kept beside the request it came with. */
const UPLOADS = new WeakMap<Request, DocumentInput | null>();
export function keepUpload(req: Request, file: DocumentInput | null): void {
  UPLOADS.set(req, file);
}
export function uploadOf(req: Request): DocumentInput | null {
  return UPLOADS.get(req) ?? null;
}

export function body(req: Request): Record<string, unknown> {
  return (req.body ?? {}) as Record<string, unknown>;
}

export const isRecordId = (value: string) => recordIdSchema.safeParse(value).success;

export function send(res: Response, page: SafeHtml, status = 200): void {
  res.status(status).type('html').send(page.value);
}

export const csrf = (res: Response) => adminOf(res)?.csrfToken ?? null;

export function installationId(req: Request): string {
  const result = installationIdSchema.safeParse(req.params.id);
  if (!result.success)
    throw new AdminRequestError(
      404,
      'INSTALLATION_NOT_FOUND',
      `There is no installation ${String(req.params.id)}.`,
    );
  return result.data;
}

/** Runs a form's change; a refusal renders the installation page again with the reason beside the form. */
export function changeOf(installationPages: InstallationPages) {
  return (form: PageForm, run: (req: Request, id: string, res: Response) => Promise<string>) =>
    async (req: Request, res: Response) => {
      const id = installationId(req);
      try {
        res.redirect(303, await run(req, id, res));
      } catch (err) {
        if (!(err instanceof AdminRequestError) || err.code === 'INSTALLATION_NOT_FOUND') throw err;
        const page = await installationPages.render(FORM_TAB[form], req, id, csrf(res), {
          error: { form, message: err.message },
        });
        send(res, page, err.status);
      }
    };
}
