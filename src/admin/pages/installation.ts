import type { Request, Router } from 'express';
import { tabOfOldQuery } from '../installation-pages.js';
import { massNotice } from '../mass-page-routes.js';
import { recordViewOr404 } from '../record-view.js';
import { recordIdSchema } from '../schemas.js';
import type { PlacedNotice } from '../views/after-action.js';
import { TAB_PATHS, tabPath } from '../views/installation-tabs.js';
import { queryStrings } from '../views/list-paging.js';
import { recordPage } from '../views/record-page.js';
import { csrf, doneMessage, installationId, type PageKit, send } from './kit.js';

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

/** A single decision's message naming its record, with the item to place it before (review, links). */
async function placedNotice(kit: PageKit, req: Request, id: string): Promise<PlacedNotice | null> {
  const done = typeof req.query.done === 'string' ? req.query.done : '';
  const message = PLACED_MESSAGES[done];
  const record = recordIdSchema.safeParse(req.query.record);
  if (!message || !record.success) return null;
  const [status, name, [slug = null]] = await Promise.all([
    kit.ctx.index.statusOf(id, record.data),
    kit.installationPages.recordName(id, record.data),
    kit.ctx.index.slugsOf(id, [record.data]),
  ]);
  // A record the installation does not know gets the fixed sentence: an id from a link is not words to show.
  if (status === null) return null;
  const next = recordIdSchema.safeParse(req.query.next);
  return {
    message: message(name ? `${name} (record ${record.data})` : `record ${record.data}`, slug),
    next: next.success ? next.data : null,
  };
}

/** One installation's tabs (overview, review, links, requests, settings) and one record's page. */
export function addInstallationPages(pages: Router, kit: PageKit): void {
  const { ctx, actions, installationPages } = kit;
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

  for (const tab of ['review', 'links', 'requests', 'settings'] as const) {
    pages.get(`/installations/:id${TAB_PATHS[tab]}`, async (req, res) => {
      const id = installationId(req);
      const placed = tab === 'review' || tab === 'links' ? await placedNotice(kit, req, id) : null;
      const notice = placed ? null : (doneMessage(req) ?? (await massNotice(actions, req, id)));
      send(res, await installationPages.render(tab, req, id, csrf(res), { notice, placed }));
    });
  }

  pages.get('/installations/:id/records/:recordId', async (req, res) => {
    const id = installationId(req);
    const view = await recordViewOr404(ctx, id, req.params.recordId);
    send(res, recordPage({ view, csrfToken: csrf(res) }));
  });
}
