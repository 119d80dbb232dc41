import type { Request } from 'express';
import type { AppContext } from '../app/context.js';
import type { CompanyRecord } from '../crm/connector.js';
import type { Decision } from '../decisions/decision-log.js';
import type { MassActionSummary } from '../decisions/mass-actions.js';
import type { MatchStatus } from '../fields.js';
import type { Installation } from '../installations/store.js';
import { providerFor } from '../providers.js';
import type { AdminActions } from './admin-actions.js';
import type { SafeHtml } from './html.js';
import { NAME_SEARCH_LIMIT, searchByName } from './linked-by-name.js';
import type { AdminOverview, InstallationView } from './overview.js';
import { reviewPageQuerySchema } from './schemas.js';
import type { PlacedNotice } from './views/after-action.js';
import type { LinkedItem, LogWords } from './views/corrections.js';
import { runWords } from './views/format.js';
import { installationPage, type PageForm } from './views/installation-page.js';
import type { InstallationTab } from './views/installation-tabs.js';
import {
  DECISIONS_BEFORE,
  DECISIONS_QUERY,
  LINKED_LIST,
  type ListPart,
  linksPage,
  NOT_PUBLISHED_LIST,
  type NotPublishedItem,
} from './views/links-page.js';
import { type ListParams, type ListPlace, listPlace, pageCount, queryStrings } from './views/list-paging.js';
import type { NoMatchItem } from './views/requests.js';
import { NO_MATCH_LIST, REQUESTED_LIST, requestsPage } from './views/requests-page.js';
import { REVIEW_LIST, reviewPage } from './views/review-page.js';
import { settingsPage } from './views/settings-page.js';

/**
 * The installation's pages (overview, review, links, requests and alerts, settings): what each reads and which
 * page a form's refusal is shown on. Every list is read a page at a time by an indexed range
 * (storage/status-counts.ts, ReviewQueue.page), never by reading the whole list and slicing it.
 */

const RUNS_SHOWN = 10;
const LIST_SHOWN = 20;
const DECISIONS_SHOWN = 20;
const MASS_ACTIONS_SHOWN = 10;

/** The page each form lives on: a refused change is shown there, beside its form. */
export const FORM_TAB: Record<PageForm, InstallationTab> = {
  key: 'settings',
  fixtures: 'settings',
  review: 'review',
  sync: 'overview',
  preview: 'overview',
  request: 'requests',
  alerts: 'requests',
  links: 'links',
  undo: 'links',
};

/** Where the single page's `?done=` of each change now lives (the old URLs redirect there). */
const DONE_TAB: Record<string, InstallationTab> = {
  'key-saved': 'settings',
  'key-saved-resumed': 'settings',
  'fixture-writes-refused': 'settings',
  'review-linked': 'review',
  'review-rejected': 'review',
  'review-bulk-linked': 'review',
  'review-bulk-rejected': 'review',
  'review-bulk-partial': 'review',
  'review-bulk-empty': 'review',
  // A mass action's notice: a bulk review's comes back with its review paging (to the review page); an undo's
  // (a sync's, a mass action's) belongs with the corrections and the mass actions.
  mass: 'links',
  'mass-none': 'links',
  'key-server': 'settings',
  'key-server-resumed': 'settings',
  unlinked: 'links',
  rematched: 'links',
  'run-undone': 'links',
  'report-requested': 'requests',
  'report-request-pending': 'requests',
  'alert-activity-on': 'requests',
  'alert-activity-off': 'requests',
};

/**
 * The page an old single-page URL stands for: its review paging (`page`, `per`, `q`) or the `done` of a change
 * made on another page. Null: the overview.
 */
export function tabOfOldQuery(query: Record<string, unknown>): InstallationTab | null {
  if ('page' in query || 'per' in query || 'q' in query) return 'review';
  const done = query.done;
  return typeof done === 'string' ? (DONE_TAB[done] ?? null) : null;
}

export interface PageExtra {
  notice?: string | null;
  /** A single decision's message, placed in its list (review, links). */
  placed?: PlacedNotice | null;
  error?: { form: PageForm; message: string } | null;
}

type StatusListPart = ListPart<{ recordId: string; normalizedName: string | null; crmName?: string | null }>;

/** What each tab's renderer reads: the request, the installation, and the view read once for all of them. */
interface TabInput {
  id: string;
  req: Request;
  installation: Installation;
  extra: PageExtra;
  query: Record<string, string>;
  /** The refusal's reason, shown beside its form. */
  message: string | null;
  common: () => Promise<{
    view: InstallationView & { approveCsrf: string | null };
    csrfToken: string | null;
    notice: string | null;
  }>;
}

/** Requests wait in a list of their own (requests/request-store.ts), kept small by the service's answers. */
function pendingPage<T extends { recordId: string; name?: string | null }>(
  req: Request,
  pendingAll: T[],
): ListPart<T> {
  const place = listPlace(req.query as Record<string, unknown>, REQUESTED_LIST, LIST_SHOWN);
  const needle = place.query.toLowerCase();
  const matching = place.query
    ? pendingAll.filter((r) => r.recordId === place.query || (r.name ?? '').toLowerCase().includes(needle))
    : pendingAll;
  const page = Math.min(place.page, pageCount(matching.length, place.per));
  return {
    items: matching.slice((page - 1) * place.per, page * place.per),
    total: matching.length,
    place: { ...place, page },
  };
}

export class InstallationPages {
  constructor(
    private readonly ctx: AppContext,
    private readonly actions: AdminActions,
    private readonly overview: AdminOverview,
  ) {}

  async render(
    tab: InstallationTab,
    req: Request,
    id: string,
    csrf: string | null,
    extra: PageExtra,
  ): Promise<SafeHtml> {
    const installation = await this.actions.installation(id);
    // The view and the page's own lists are read at once.
    const viewRead = this.overview
      .view(installation, { light: tab !== 'overview' })
      .then((v) => ({ ...v, approveCsrf: csrf }));
    const page: TabInput = {
      id,
      req,
      installation,
      extra,
      query: queryStrings(req.query as Record<string, unknown>),
      message: extra.error?.message ?? null,
      common: async () => ({ view: await viewRead, csrfToken: csrf, notice: extra.notice ?? null }),
    };
    switch (tab) {
      case 'overview':
        return this.overviewTab(page);
      case 'review':
        return this.reviewTab(page);
      case 'links':
        return this.linksTab(page);
      case 'requests':
        return this.requestsTab(page);
      case 'settings': {
        const error =
          extra.error && (extra.error.form === 'key' || extra.error.form === 'fixtures')
            ? { form: extra.error.form, message: extra.error.message }
            : null;
        return settingsPage({ ...(await page.common()), error });
      }
    }
  }

  private async overviewTab({ id, extra, common }: TabInput): Promise<SafeHtml> {
    const [c, runs, preview] = await Promise.all([
      common(),
      this.ctx.runs.recent(id, RUNS_SHOWN),
      this.actions.latestPreview(id),
    ]);
    return installationPage({
      ...c,
      runs,
      preview,
      lastChange: c.view.lastChangeAt,
      error: extra.error,
    });
  }

  private async reviewTab({ id, req, extra, query, message, common }: TabInput): Promise<SafeHtml> {
    const { per } = reviewPageQuerySchema.parse(req.query);
    const place = listPlace(req.query as Record<string, unknown>, REVIEW_LIST, per);
    const [c, found] = await Promise.all([
      common(),
      place.query
        ? this.ctx.index.reviews.search(id, place.query, per).then((f) => ({ ...f, place }))
        : this.atPage(place, (offset, count) => this.ctx.index.reviews.page(id, offset, count)),
    ]);
    return reviewPage({
      ...c,
      placed: extra.placed ?? null,
      items: found.items,
      total: found.total,
      place: found.place,
      query,
      error: message,
    });
  }

  private async linksTab({ id, req, extra, query, message, common }: TabInput): Promise<SafeHtml> {
    const [c, linked, notPublished, runs, decisions, decisionCount, massActions] = await Promise.all([
      common(),
      this.linkedList(id, req),
      this.statusList(id, 'not_published', NOT_PUBLISHED_LIST, req),
      this.ctx.runs.recent(id, RUNS_SHOWN),
      this.decisionLog(id, query),
      this.ctx.decisions.count(id),
      this.actions.mass.log.recent(id, MASS_ACTIONS_SHOWN),
    ]);
    const [{ linkedPart, npPart }, logWords] = await Promise.all([
      this.namedLinkLists(id, linked, notPublished),
      this.logWords(id, decisions.decisions, massActions),
    ]);
    return linksPage({
      ...c,
      placed: extra.placed ?? null,
      linked: linkedPart,
      notPublished: npPart,
      runs,
      decisions: decisions.decisions,
      decisionPage: decisions.page,
      massActions,
      logWords,
      decisionCount,
      query,
      error: message,
    });
  }

  /** The links tab's two lists with each record's CRM name and slug. */
  private async namedLinkLists(id: string, linked: StatusListPart, notPublished: StatusListPart) {
    const ids = [...linked.items, ...notPublished.items].map((r) => r.recordId);
    // A search by name already has the CRM's names of what it found: only the others are read.
    const known = new Map(
      linked.items.flatMap((r): [string, string | null][] =>
        r.crmName === undefined ? [] : [[r.recordId, r.crmName]],
      ),
    );
    const [slugs, read] = await Promise.all([
      this.ctx.index.slugsOf(id, ids),
      this.crmNames(
        id,
        ids.filter((r) => !known.has(r)),
      ),
    ]);
    const names = new Map([...read, ...known]);
    const slugOf = new Map(ids.map((r, i) => [r, slugs[i] ?? null]));
    const linkedPart: ListPart<LinkedItem> = {
      ...linked,
      items: linked.items.map((r) => ({
        recordId: r.recordId,
        name: names.get(r.recordId) ?? null,
        slug: slugOf.get(r.recordId) ?? null,
      })),
    };
    const npPart: ListPart<NotPublishedItem> = {
      ...notPublished,
      items: notPublished.items.map((r) => ({
        recordId: r.recordId,
        name: names.get(r.recordId) ?? r.normalizedName,
        slug: slugOf.get(r.recordId) ?? null,
      })),
    };
    return { linkedPart, npPart };
  }

  private async requestsTab({ id, req, installation, query, message, common }: TabInput): Promise<SafeHtml> {
    const [c, noMatch, pendingAll] = await Promise.all([
      common(),
      this.statusList(id, 'no_match', NO_MATCH_LIST, req),
      this.actions.pendingRequests(id),
    ]);
    const ids = noMatch.items.map((r) => r.recordId);
    const [records, slugs] = await Promise.all([this.crmRecords(id, ids), this.ctx.index.slugsOf(id, ids)]);
    const pendingOf = new Map(pendingAll.map((p) => [p.recordId, p]));
    const noMatchPart: ListPart<NoMatchItem> = {
      ...noMatch,
      items: noMatch.items.map((r, i) => {
        const record = records.get(r.recordId);
        // The list is the index's, read a moment ago: a record may have been linked (in the CRM or by a sync)
        // or asked for since. Then that is shown, and no request is offered.
        const crmSlug = record?.fields.slug;
        const slug = slugs[i] ?? (typeof crmSlug === 'string' && crmSlug ? crmSlug : null);
        const pending = pendingOf.get(r.recordId);
        return {
          recordId: r.recordId,
          name: record?.name ?? r.normalizedName,
          domain: record?.domain ?? null,
          country: record?.country ?? null,
          has: slug
            ? { kind: 'report' as const, slug }
            : pending
              ? { kind: 'requested' as const, at: pending.requestedAt }
              : null,
        };
      }),
    };
    const reinstallUrl =
      installation.mode === 'oauth' ? (providerFor(installation.crm).activity.grant?.path ?? null) : null;
    return requestsPage({
      ...c,
      noMatch: noMatchPart,
      pending: pendingPage(req, pendingAll),
      alertActivity: installation.alertActivity === true,
      reinstallUrl,
      query,
      error: message,
    });
  }

  /**
   * One page of a list read by position; a page past the end reads the last page instead (a list that shrank
   * since the link was made).
   */
  private async atPage<T>(
    place: ListPlace,
    read: (offset: number, count: number) => Promise<{ total: number; items: T[] }>,
  ): Promise<{ total: number; items: T[]; place: ListPlace }> {
    const first = await read((place.page - 1) * place.per, place.per);
    const last = pageCount(first.total, place.per);
    if (place.page <= last) return { ...first, place };
    return { ...(await read((last - 1) * place.per, place.per)), place: { ...place, page: last } };
  }

  private async statusList(
    id: string,
    status: MatchStatus,
    params: ListParams,
    req: Request,
  ): Promise<ListPart<{ recordId: string; normalizedName: string | null; crmName?: string | null }>> {
    const place = listPlace(req.query as Record<string, unknown>, params, LIST_SHOWN);
    if (place.query) {
      const found = await this.ctx.index.searchStatus(id, status, place.query, place.per);
      return { items: found.records, total: found.total, place };
    }
    const read = await this.atPage(place, async (offset, count) => {
      const page = await this.ctx.index.statusPage(id, status, offset, count);
      return { total: page.total, items: page.records };
    });
    return { items: read.items, total: read.total, place: read.place };
  }

  /**
   * Linked records: a search that finds no record id or slug is a name, asked of the CRM (the connector keeps no
   * names of linked records) and paged here; when the CRM cannot be asked, `note` says so.
   */
  private async linkedList(
    id: string,
    req: Request,
  ): Promise<ListPart<{ recordId: string; normalizedName: string | null; crmName?: string | null }>> {
    const byIdOrSlug = await this.statusList(id, 'matched', LINKED_LIST, req);
    const { place } = byIdOrSlug;
    if (!place.query || byIdOrSlug.total > 0) return byIdOrSlug;
    const found = await searchByName(this.ctx, id, 'matched', place.query);
    if (found.kind === 'unavailable') return { ...byIdOrSlug, note: found.sentence };
    const page = Math.min(place.page, pageCount(found.records.length, place.per));
    return {
      items: found.records
        .slice((page - 1) * place.per, page * place.per)
        .map((r) => ({ recordId: r.recordId, normalizedName: null, crmName: r.name })),
      total: found.records.length,
      place: { ...place, page },
      paged: true,
      ...(found.capped
        ? {
            note: `The CRM was asked for the first ${NAME_SEARCH_LIMIT} names only: a longer query narrows it.`,
          }
        : {}),
    };
  }

  /** The decision log's page by cursor (`dl-before`), or a search (`dl-q`) by record id or slug. */
  private async decisionLog(id: string, query: Record<string, string>) {
    const q = (query[DECISIONS_QUERY] ?? '').trim().slice(0, 200);
    if (q) {
      const found = await this.ctx.decisions.search(id, q, DECISIONS_SHOWN);
      return {
        decisions: found.decisions,
        page: { before: null, older: null, query: q, found: found.total },
      };
    }
    const before = /^\d+-\d+$/.test(query[DECISIONS_BEFORE] ?? '') ? query[DECISIONS_BEFORE]! : null;
    const page = await this.ctx.decisions.page(id, before, DECISIONS_SHOWN);
    return { decisions: page.decisions, page: { before, older: page.older, query: '', found: null } };
  }

  /** The decision log's records by name and the runs it and the mass actions name, in words. */
  private async logWords(
    id: string,
    decisions: readonly Decision[],
    massActions: readonly MassActionSummary[],
  ): Promise<LogWords> {
    const runIds = [
      ...new Set([
        ...decisions.flatMap((d) => (d.evidence.runId ? [d.evidence.runId] : [])),
        ...massActions.flatMap((m) => (m.runId ? [m.runId] : [])),
      ]),
    ];
    const [names, runs] = await Promise.all([
      this.crmNames(id, [...new Set(decisions.map((d) => d.recordId))]),
      Promise.all(runIds.map((r) => this.ctx.runs.get(r))),
    ]);
    const words = new Map<string, string>();
    for (const run of runs) if (run && run.installationId === id) words.set(run.id, runWords(run));
    return { names, runs: words };
  }

  /** One record's name as the CRM has it; null when it cannot be read. */
  async recordName(id: string, recordId: string): Promise<string | null> {
    const read = (await this.crmNames(id, [recordId])).get(recordId);
    return read ?? null;
  }

  /** A few records as the CRM has them; none when the CRM is slow or down (the page still renders). */
  private async crmRecords(id: string, recordIds: string[]): Promise<Map<string, CompanyRecord>> {
    const records = new Map<string, CompanyRecord>();
    if (recordIds.length === 0) return records;
    try {
      const { connector } = await this.ctx.runtime.open(id);
      for (const record of await connector.readCompanies(recordIds)) records.set(record.id, record);
    } catch (err) {
      this.ctx.logger.debug({ err, installationId: id }, 'records not read');
    }
    return records;
  }

  /** The CRM's names of a few records; none when the CRM is slow or down (the page still renders). */
  private async crmNames(id: string, recordIds: string[]): Promise<Map<string, string | null>> {
    const names = new Map<string, string | null>();
    if (recordIds.length === 0) return names;
    try {
      const { connector } = await this.ctx.runtime.open(id);
      for (const record of await connector.readCompanies(recordIds)) names.set(record.id, record.name);
    } catch (err) {
      this.ctx.logger.debug({ err, installationId: id }, 'names of records not read');
    }
    return names;
  }
}
