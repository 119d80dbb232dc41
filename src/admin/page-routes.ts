import express, { type NextFunction, type Request, type Response, Router } from 'express';
import type { AppContext } from '../app/context.js';
import { metricsRefresherFor } from '../app/metrics-refresher.js';
import { isRedisUnavailable } from '../redis-availability.js';
import type { DocumentInput } from '../reports/submissions.js';
import type { AdminActions } from './admin-actions.js';
import type { AdminAuth } from './admin-auth.js';
import { AdminRequestError, badRequest } from './errors.js';
import { type AdminGuard, adminOf, clientOf, deciderOf, TOO_MANY_ATTEMPTS_MESSAGE } from './guard.js';
import type { SafeHtml } from './html.js';
import { bodyError } from './http-errors.js';
import { FORM_TAB, InstallationPages, tabOfOldQuery } from './installation-pages.js';
import type { LoginThrottle } from './login-throttle.js';
import { addMassPageRoutes, massNotice } from './mass-page-routes.js';
import type { AdminOverview } from './overview.js';
import { recordViewOr404 } from './record-view.js';
import {
  installationIdSchema,
  loginFormSchema,
  REVIEW_PAGE_SIZES,
  recordIdSchema,
  reportKeyBodySchema,
  reviewDecisionSchema,
  safeNextPath,
} from './schemas.js';
import type { SessionRevocations } from './session-revocations.js';
import { readMultipartBody, readUploadForm } from './uploads.js';
import { afterActionQuery, focusId, type PlacedNotice, sentPlace } from './views/after-action.js';
import { FORM_RECORD } from './views/corrections.js';
import { type AdminLink, dashboardPage } from './views/dashboard.js';
import { installationPath, installationTitle } from './views/format.js';
import type { PageForm } from './views/installation-page.js';
import { TAB_PATHS, tabPath } from './views/installation-tabs.js';
import { queryStrings } from './views/list-paging.js';
import { loginPage } from './views/login.js';
import { disconnectPage, eventsPage, messagePage } from './views/misc-pages.js';
import { recordPage } from './views/record-page.js';
import { unlinkConfirmPage } from './views/unlink-confirm.js';

/**
 * The admin page, mounted at /admin: server-rendered HTML with plain forms. Every change is a POST carrying the
 * CSRF token, answered with a redirect (so reloading never repeats it) to a page that says what happened; a
 * refused change renders the page again with the reason.
 */

export interface PageRouteDeps {
  ctx: AppContext;
  auth: AdminAuth;
  guard: AdminGuard;
  actions: AdminActions;
  overview: AdminOverview;
  revocations: SessionRevocations;
  throttle: LoginThrottle;
  /** Renders the login form in place of a page that needs the admin. */
  showLogin: (req: Request, res: Response, next: NextFunction) => void;
  /** More pages of this server for the installations page to list (the demo's component previews). */
  links?: readonly AdminLink[];
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

/** The file of a request form, read before the CSRF check and kept beside the request it came with. */
const UPLOADS = new WeakMap<Request, DocumentInput | null>();
function uploadOf(req: Request): DocumentInput | null {
  return UPLOADS.get(req) ?? null;
}

function body(req: Request): Record<string, unknown> {
  return (req.body ?? {}) as Record<string, unknown>;
}

const isRecordId = (value: string) => recordIdSchema.safeParse(value).success;

function send(res: Response, page: SafeHtml, status = 200): void {
  res.status(status).type('html').send(page.value);
}

/**
 * The sentence of a single decision naming its record (`?done=…&record=<id>`): the name is read from the CRM and
 * the slug from the link index, never taken from the link, so a crafted URL cannot put words on the page.
 */
const PLACED_MESSAGES: Record<string, (who: string, slug: string | null) => string> = {
  'review-linked': (who, slug) =>
    `Linked ${who}${slug ? ` to ${slug}` : ''}: the report was written to the CRM record.`,
  'review-rejected': (who) =>
    `Rejected the candidates of ${who}: they will not be offered again, and the CRM record was updated.`,
  unlinked: (who) =>
    `Unlinked ${who}: the record has no report now, by your decision, and will not be linked again by matching. “Match a record again” (above) takes it back.`,
  rematched: (who, slug) =>
    `Matched ${who} again: the decision was lifted and matching ran${slug ? `; it is linked to ${slug}` : ''}; its new state is written to the CRM.`,
};

function doneMessage(req: Request): string | null {
  const done = req.query.done;
  return typeof done === 'string' ? (DONE_MESSAGES[done] ?? null) : null;
}

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

export function adminPageRouter(deps: PageRouteDeps): Router {
  const { ctx, auth, guard, actions, overview, revocations, throttle, showLogin } = deps;
  const router = Router();
  // The bulk review form sends one field per selected record (up to the largest review page).
  router.use(
    '/installations/:id/review/bulk',
    express.urlencoded({
      extended: false,
      limit: '64kb',
      parameterLimit: Math.max(...REVIEW_PAGE_SIZES) + 8,
    }),
  );
  router.use(express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 20 }));

  const csrf = (res: Response) => adminOf(res)?.csrfToken ?? null;

  // ---- login and logout ---------------------------------------------------------------------------------

  router.get('/login', (req, res) => {
    if (adminOf(res)) return res.redirect(303, '/admin');
    const next = typeof req.query.next === 'string' ? safeNextPath(req.query.next) : '/admin';
    send(res, loginPage({ next, notice: doneMessage(req) }));
  });

  router.post('/login', async (req, res) => {
    const client = clientOf(req);
    const form = loginFormSchema.safeParse(req.body ?? {});
    const next = safeNextPath(form.success ? form.data.next : undefined);
    const admin = form.success ? auth.adminFor(form.data.token) : null;
    const verdict = await throttle.judge(client, admin !== null);
    if (verdict.kind === 'throttled') {
      res.set('Retry-After', String(verdict.retryAfterSeconds));
      return send(res, loginPage({ next, error: TOO_MANY_ATTEMPTS_MESSAGE }), 429);
    }
    if (verdict.kind === 'refused') {
      return send(
        res,
        loginPage({ next, error: 'That is not the admin token. Check ADMIN_TOKEN and try again.' }),
        401,
      );
    }
    await throttle.reset(client);
    const { session, cookieValue } = auth.issueSession(admin?.name ?? null);
    res.append('Set-Cookie', auth.sessionCookie(cookieValue, session));
    res.append('Set-Cookie', auth.xsrfCookie(session));
    res.redirect(303, next);
  });

  const pageCsrf = guard.requireCsrf((_req, res) => {
    send(
      res,
      messagePage({
        title: 'Form expired',
        message:
          'This form was not sent by the admin page, or your session changed. Go back, reload the page and try again.',
        signedIn: adminOf(res) !== null,
        csrfToken: adminOf(res)?.csrfToken ?? null,
      }),
      403,
    );
  });

  router.post('/logout', guard.requirePage(showLogin), pageCsrf, async (_req, res) => {
    const session = adminOf(res)?.session;
    if (session) await revocations.revoke(session.id, session.expiresAt);
    for (const cookie of auth.clearedCookies()) res.append('Set-Cookie', cookie);
    res.redirect(303, '/admin/login?done=logged-out');
  });

  // ---- everything below needs the admin -------------------------------------------------------------------

  const pages = Router();
  pages.use(guard.requirePage(showLogin), pageCsrf);
  const installationPages = new InstallationPages(ctx, actions, overview);

  pages.get('/', async (req, res) => {
    const views = (await overview.list()).map((v) => ({ ...v, approveCsrf: csrf(res) }));
    send(
      res,
      dashboardPage({
        views,
        csrfToken: csrf(res),
        notice: doneMessage(req) ?? installedMessage(req),
        queuesWithoutWorkers: queuesWithoutWorkers(ctx),
        links: deps.links ?? [],
      }),
    );
  });

  pages.get('/events', async (_req, res) => {
    const events = await ctx.events.recent(200);
    const activities = await ctx.alerts.outcomes(
      events.filter((e) => e.type === 'alert.fired').map((e) => e.id),
    );
    send(res, eventsPage({ events, activities, csrfToken: csrf(res) }));
  });

  const installationId = (req: Request): string => {
    const result = installationIdSchema.safeParse(req.params.id);
    if (!result.success)
      throw new AdminRequestError(
        404,
        'INSTALLATION_NOT_FOUND',
        `There is no installation ${String(req.params.id)}.`,
      );
    return result.data;
  };

  /** Runs a form's change; a refusal renders the installation page again with the reason beside the form. */
  const change =
    (form: PageForm, run: (req: Request, id: string, res: Response) => Promise<string>) =>
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

  // The single page's URL is the overview; its review paging and the `done` of a change made on another page
  // redirect there (a browser keeps the `#anchor` of the old link across the redirect).
  pages.get('/installations/:id', async (req, res) => {
    const id = installationId(req);
    const moved = tabOfOldQuery(req.query as Record<string, unknown>);
    if (moved) {
      const search = new URLSearchParams(queryStrings(req.query as Record<string, unknown>)).toString();
      res.redirect(303, tabPath(id, moved, search ? `?${search}` : ''));
      return;
    }
    const notice = doneMessage(req) ?? (await massNotice(actions, req, id));
    send(res, await installationPages.render('overview', req, id, csrf(res), { notice }));
  });

  /** A single decision's message naming its record, with the item to place it before (review, links). */
  const placedNotice = async (req: Request, id: string): Promise<PlacedNotice | null> => {
    const done = typeof req.query.done === 'string' ? req.query.done : '';
    const message = PLACED_MESSAGES[done];
    const record = recordIdSchema.safeParse(req.query.record);
    if (!message || !record.success) return null;
    const [status, name, [slug = null]] = await Promise.all([
      ctx.index.statusOf(id, record.data),
      installationPages.recordName(id, record.data),
      ctx.index.slugsOf(id, [record.data]),
    ]);
    // A record the installation does not know gets the fixed sentence: an id from a link is not words to show.
    if (status === null) return null;
    const next = recordIdSchema.safeParse(req.query.next);
    return {
      message: message(name ? `${name} (record ${record.data})` : `record ${record.data}`, slug),
      next: next.success ? next.data : null,
    };
  };

  for (const tab of ['review', 'links', 'requests', 'settings'] as const) {
    pages.get(`/installations/:id${TAB_PATHS[tab]}`, async (req, res) => {
      const id = installationId(req);
      const placed = tab === 'review' || tab === 'links' ? await placedNotice(req, id) : null;
      const notice = placed ? null : (doneMessage(req) ?? (await massNotice(actions, req, id)));
      send(res, await installationPages.render(tab, req, id, csrf(res), { notice, placed }));
    });
  }

  pages.get('/installations/:id/records/:recordId', async (req, res) => {
    const id = installationId(req);
    const view = await recordViewOr404(ctx, id, req.params.recordId);
    send(res, recordPage({ view, csrfToken: csrf(res) }));
  });

  pages.post(
    '/installations/:id/key',
    change('key', async (req, id) => {
      const parsed = reportKeyBodySchema.safeParse(req.body ?? {});
      if (!parsed.success) throw badRequest(parsed.error, 'The key');
      const result = await actions.setReportKey(id, parsed.data.apiKey);
      return installationPath(id, `?done=${result.resumedRunId ? 'key-saved-resumed' : 'key-saved'}#key`);
    }),
  );

  pages.post(
    '/installations/:id/key/server',
    change('key', async (_req, id) => {
      const result = await actions.useServerKey(id);
      return installationPath(id, `?done=${result.resumedRunId ? 'key-server-resumed' : 'key-server'}#key`);
    }),
  );

  pages.post(
    '/installations/:id/sync',
    change('sync', async (req, id) => {
      const body = (req.body ?? {}) as Record<string, unknown>;
      const { joined } = await actions.startSync(id, body.full === 'true');
      return installationPath(id, `?done=${joined ? 'sync-joined' : 'sync-started'}#runs`);
    }),
  );

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

  pages.post(
    '/installations/:id/records/:recordId/request',
    change('request', async (req, id) => {
      const recordId = recordIdSchema.safeParse(req.params.recordId);
      if (!recordId.success) throw badRequest(recordId.error, 'The record id');
      const upload = uploadOf(req);
      const outcome = await actions.requestReport(id, recordId.data, upload);
      return installationPath(
        id,
        `?done=${outcome.existing ? 'report-request-pending' : 'report-requested'}#requests`,
      );
    }),
  );

  /** The record id of a form's action, from the path or (for the look-up forms) from the form's field. */
  const formRecordId = (req: Request): string => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const raw = req.params.recordId === FORM_RECORD ? body.recordId : req.params.recordId;
    const recordId = recordIdSchema.safeParse(typeof raw === 'string' ? raw.trim() : raw);
    if (!recordId.success) throw badRequest(recordId.error, 'The record id');
    return recordId.data;
  };

  /**
   * A single unlink is shown first, like a mass action: the form without `confirm` answers the confirmation
   * page, whose form posts the same request with it.
   */
  const confirmUnlink = async (req: Request, res: Response, id: string, recordId: string) => {
    const [installation, name, status, [slug = null]] = await Promise.all([
      actions.installation(id),
      installationPages.recordName(id, recordId),
      ctx.index.statusOf(id, recordId),
      ctx.index.slugsOf(id, [recordId]),
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
    const view = await overview.view(installation, { light: true });
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
  };

  pages.post('/installations/:id/records/:recordId/unlink', async (req, res, next) => {
    const form = body(req);
    if (form.confirm === 'unlink') return next();
    const id = installationId(req);
    try {
      await confirmUnlink(req, res, id, formRecordId(req));
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

  pages.post(
    '/installations/:id/alert-activity',
    change('alerts', async (req, id) => {
      const body = (req.body ?? {}) as Record<string, unknown>;
      const on = body.on === 'true';
      await actions.setAlertActivity(id, on);
      return installationPath(id, `?done=${on ? 'alert-activity-on' : 'alert-activity-off'}#alerts`);
    }),
  );
  pages.post(
    '/installations/:id/preview',
    change('preview', async (_req, id) => {
      await actions.startPreview(id);
      return installationPath(id, '?done=preview-started#preview');
    }),
  );

  pages.post(
    '/installations/:id/fixture-writes',
    change('fixtures', async (req, id) => {
      const body = (req.body ?? {}) as Record<string, unknown>;
      const allow = body.allow === 'true';
      await actions.setAllowFixtureWrites(id, allow);
      return installationPath(id, `?done=${allow ? 'fixture-writes-allowed' : 'fixture-writes-refused'}`);
    }),
  );

  pages.post('/installations/:id/approve', async (req, res) => {
    const id = installationId(req);
    await actions.approve(id);
    res.redirect(303, installationPath(id, '?done=approved#runs'));
  });

  pages.get('/installations/:id/disconnect', async (req, res) => {
    const installation = await actions.installation(installationId(req));
    send(res, disconnectPage({ view: await overview.view(installation), csrfToken: csrf(res) }));
  });

  pages.post('/installations/:id/disconnect', async (req, res) => {
    const { revocation } = await actions.remove(installationId(req));
    if (revocation.outcome !== 'failed') {
      res.redirect(
        303,
        `/admin?done=${revocation.outcome === 'revoked' ? 'disconnected-revoked' : 'disconnected'}`,
      );
      return;
    }
    // Removed here but still authorised in the CRM: the admin must finish there, so say how.
    send(
      res,
      messagePage({
        title: 'Disconnected here, still authorised in the CRM',
        message: `${revocation.message} ${revocation.whatToDo}`,
        signedIn: true,
        csrfToken: csrf(res),
      }),
    );
  });

  pages.use((req, res, next) => {
    // /admin/api and /admin/queues are matched before this router; anything else here is an unknown page.
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    send(
      res,
      messagePage({
        title: 'Page not found',
        message: 'There is no such admin page.',
        signedIn: true,
        csrfToken: csrf(res),
      }),
      404,
    );
  });

  pages.use((err: unknown, _req: Request, res: Response, next: NextFunction) => {
    const known = err instanceof AdminRequestError ? err : bodyError(err);
    if (!known) {
      // Redis away: the admin router answers 503 with its own page.
      if (res.headersSent || isRedisUnavailable(err, ctx.redis)) return next(err);
      // A fault of ours: logged with its stack for the operator, and a page (not JSON) for the person.
      ctx.logger.error({ err }, 'admin page failed');
      const message =
        'Something went wrong on the connector’s side. The details are in its log; try again in a moment.';
      send(
        res,
        messagePage({ title: 'Error', message, signedIn: adminOf(res) !== null, csrfToken: csrf(res) }),
        500,
      );
      return;
    }
    const title = known.status === 404 ? 'Not found' : 'That did not work';
    send(
      res,
      messagePage({ title, message: known.message, signedIn: adminOf(res) !== null, csrfToken: csrf(res) }),
      known.status,
    );
  });

  // The request form is multipart (it carries a file): read it before the pages' CSRF check looks at the body.
  router.post(
    '/installations/:id/records/:recordId/request',
    guard.requirePage(showLogin),
    readMultipartBody,
    async (req, _res, next) => {
      try {
        const form = await readUploadForm(req, 'document');
        req.body = form.fields;
        UPLOADS.set(req, form.file);
        next();
      } catch (err) {
        next(err);
      }
    },
  );
  router.use(pages);
  return router;
}
