import type { Request, Response, Router } from 'express';
import type { AppContext } from '../app/context.js';
import type { AdminActions } from './admin-actions.js';
import { AdminRequestError, badRequest } from './errors.js';
import { adminOf, deciderOf } from './guard.js';
import type { SafeHtml } from './html.js';
import type { MassPreview, MassRequest } from './mass-actions.js';
import type { AdminOverview } from './overview.js';
import {
  bulkReviewSchema,
  confirmSchema,
  installationIdSchema,
  massIdSchema,
  REVIEW_PAGE_SIZES,
  recordIdSchema,
  reviewPageQuerySchema,
} from './schemas.js';
import { sentPlace } from './views/after-action.js';
import { confirmPage, MASS_LABELS, massDoneMessage } from './views/confirm.js';
import { installationTitle, RUN_KIND_LABELS, when } from './views/format.js';
import { tabPath } from './views/installation-tabs.js';

/**
 * The admin page's mass actions: bulk accept or reject on the review queue, undoing a run's links, and
 * undoing one of those from the decision log. The first POST (no `confirm`) answers the confirmation page:
 * how many records, the first 20, what is left alone. Its form posts the same request with the set's digest;
 * if the set changed in between, the new one is shown instead of doing anything. Once done, the installation
 * page (the same review page and filter for a bulk decision) says what was done, with counts.
 */

export interface MassPageDeps {
  ctx: AppContext;
  actions: AdminActions;
  overview: AdminOverview;
  send: (res: Response, page: SafeHtml, status?: number) => void;
}

/**
 * Where the page goes back to: the same review page and size as the form was on, and its search (the list
 * place the form sent as `return`, known keys only: after-action.ts).
 */
function reviewQuery(body: unknown): string {
  const { page, per } = reviewPageQuerySchema.parse(body ?? {});
  const kept = sentPlace((body ?? {}) as Record<string, unknown>);
  kept.delete('page');
  kept.delete('per');
  const rest = kept.toString();
  return `page=${page}${per === REVIEW_PAGE_SIZES[0] ? '' : `&per=${per}`}${rest ? `&${rest}` : ''}`;
}

/** The list place the bulk form sent, passed on by its confirmation page. */
function returnField(body: unknown): [string, string][] {
  const kept = sentPlace((body ?? {}) as Record<string, unknown>).toString();
  return kept ? [['return', kept]] : [];
}

function idOf(req: Request): string {
  const result = installationIdSchema.safeParse(req.params.id);
  if (!result.success) {
    throw new AdminRequestError(
      404,
      'INSTALLATION_NOT_FOUND',
      `There is no installation ${String(req.params.id)}.`,
    );
  }
  return result.data;
}

function confirmOf(req: Request): string | undefined {
  const raw = ((req.body ?? {}) as Record<string, unknown>).confirm;
  if (raw === undefined || raw === '') return undefined;
  const parsed = confirmSchema.safeParse(raw);
  if (!parsed.success) throw badRequest(parsed.error, 'The confirmation');
  return parsed.data;
}

/** The notice of `?done=mass&mass=<id>`: the stored action's own counts (a crafted link cannot add words). */
export async function massNotice(
  actions: AdminActions,
  req: Request,
  installationId: string,
): Promise<string | null> {
  if (req.query.done !== 'mass' || typeof req.query.mass !== 'string') return null;
  const massId = massIdSchema.safeParse(req.query.mass);
  if (!massId.success) return null;
  const action = await actions.mass.log.get(installationId, massId.data);
  return action ? massDoneMessage(action) : null;
}

/** One mass action's form: what it asks, its confirmation page's words and fields, where it goes back to. */
interface MassForm {
  id: string;
  request: MassRequest;
  heading: string;
  confirmLabel: string;
  fields: [string, string][];
  back: (query: string) => string;
}

/**
 * Shows the confirmation (no `confirm` sent, or the set changed), or does it and goes to `back` with the
 * notice of what was done.
 */
async function runMass(deps: MassPageDeps, req: Request, res: Response, o: MassForm): Promise<void> {
  const { actions, overview, send } = deps;
  const confirm = confirmOf(req);
  const show = async (preview: MassPreview, changed: boolean) => {
    const view = await overview.view(await actions.installation(o.id));
    send(
      res,
      confirmPage({
        installationId: o.id,
        installationTitle: installationTitle(view),
        heading: o.heading,
        preview,
        action: req.originalUrl.split('?')[0]!,
        fields: o.fields,
        confirmLabel: o.confirmLabel,
        cancelHref: o.back(''),
        changed,
        csrfToken: adminOf(res)?.csrfToken ?? null,
      }),
    );
  };
  if (confirm === undefined) return show(await actions.mass.preview(o.id, o.request), false);
  try {
    const outcome = await actions.mass.apply(o.id, o.request, deciderOf(res), confirm);
    res.redirect(303, o.back(outcome.massId ? `done=mass&mass=${outcome.massId}` : 'done=mass-none'));
  } catch (err) {
    if (err instanceof AdminRequestError && err.code === 'SET_CHANGED') {
      return show(err.details.preview as MassPreview, true);
    }
    throw err;
  }
}

export function addMassPageRoutes(pages: Router, deps: MassPageDeps): void {
  const { actions } = deps;
  const run = (req: Request, res: Response, o: MassForm) => runMass(deps, req, res, o);

  pages.post('/installations/:id/review/bulk', async (req, res) => {
    const id = idOf(req);
    const paging = reviewQuery(req.body);
    const back = (query: string) => tabPath(id, 'review', `?${paging}${query ? `&${query}` : ''}#review`);
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (body.recordIds === undefined || body.recordIds === '') {
      // No box checked: say so on the same review page, nothing posted on.
      res.redirect(303, back('done=review-bulk-empty'));
      return;
    }
    const bulk = bulkReviewSchema.safeParse(body);
    if (!bulk.success) throw badRequest(bulk.error, 'The selection');
    const { action, recordIds } = bulk.data;
    const { page, per } = reviewPageQuerySchema.parse(body);
    await run(req, res, {
      id,
      request: { kind: 'review', bulk: { action, recordIds } },
      heading: `${MASS_LABELS[action]} of ${recordIds.length} selected`,
      confirmLabel: action === 'reject' ? 'Reject them' : 'Accept them',
      fields: [
        ['action', action],
        ['page', String(page)],
        ['per', String(per)],
        ...returnField(body),
        ...recordIds.map((r): [string, string] => ['recordIds', r]),
      ],
      back,
    });
  });

  pages.post('/installations/:id/runs/:runId/undo', async (req, res) => {
    const id = idOf(req);
    const runId = recordIdSchema.safeParse(req.params.runId);
    if (!runId.success) throw badRequest(runId.error, 'The run id');
    const found = await deps.ctx.runs.get(runId.data);
    const label =
      found && found.installationId === id
        ? `${RUN_KIND_LABELS[found.kind]} of ${when(found.startedAt)}`
        : runId.data;
    await run(req, res, {
      id,
      request: { kind: 'undo-run', runId: runId.data },
      heading: `Undo the links of the ${label}`,
      confirmLabel: 'Undo these links',
      fields: [],
      back: (query) => tabPath(id, 'links', `${query ? `?${query}` : ''}#corrections`),
    });
  });

  pages.post('/installations/:id/mass-actions/:massId/undo', async (req, res) => {
    const id = idOf(req);
    const massId = massIdSchema.safeParse(req.params.massId);
    if (!massId.success) throw badRequest(massId.error, 'The mass action id');
    const action = await actions.mass.log.get(id, massId.data);
    await run(req, res, {
      id,
      request: { kind: 'undo-mass', massId: massId.data },
      heading: `Undo “${action ? MASS_LABELS[action.kind] : 'mass action'}” of ${when(action?.at)}`,
      confirmLabel: 'Put these back',
      fields: [],
      back: (query) => tabPath(id, 'links', `${query ? `?${query}` : ''}#mass-actions`),
    });
  });
}
