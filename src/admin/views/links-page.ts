import type { Decision } from '../../decisions/decision-log.js';
import { DECISION_LOG_SIZE } from '../../decisions/decision-log.js';
import type { MassActionSummary } from '../../decisions/mass-actions.js';
import type { RunSummary } from '../../storage/runs.js';
import { html, type SafeHtml } from '../html.js';
import type { InstallationView } from '../overview.js';
import { type PlacedNotice, returnQuery } from './after-action.js';
import { massActionsSection } from './confirm.js';
import { correctionsSection, decisionLogSection, type LinkedItem, type LogWords } from './corrections.js';
import { num } from './format.js';
import { installationShell, tabPath } from './installation-tabs.js';
import { type ListPlace, listNav, listParams } from './list-paging.js';

export const DECISIONS_BEFORE = 'dl-before';
export const DECISIONS_QUERY = 'dl-q';

import { recordLink } from './record-page.js';

/**
 * `/admin/installations/:id/links`: linked records (a page at a time, searchable), unlink and re-match, undoing a
 * sync, the records whose report is not published, and the decision log.
 */

export const LINKED_LIST = listParams('linked');
export const NOT_PUBLISHED_LIST = listParams('np');

export interface ListPart<T> {
  items: readonly T[];
  /** In the list, or found by the search. */
  total: number;
  place: ListPlace;
  /** One sentence on how the search went, when it could not be done in full (the CRM could not be asked). */
  note?: string;
  /** The search's answer is paged like the list (a search by name: the CRM's matches are all kept). */
  paged?: boolean;
}

export interface NotPublishedItem {
  recordId: string;
  /** The CRM's name when read, else the normalised one the connector keeps. */
  name: string | null;
  slug: string | null;
}

export interface LinksPageInput {
  view: InstallationView;
  linked: ListPart<LinkedItem>;
  notPublished: ListPart<NotPublishedItem>;
  runs: readonly RunSummary[];
  decisions: readonly Decision[];
  decisionCount: number;
  /** The latest mass actions (undone syncs, bulk decisions), each with "Undo this". */
  massActions?: readonly MassActionSummary[];
  /** The names and runs the decision log and the mass actions name, in words. */
  logWords?: LogWords;
  /** Where the decision log's page is: the cursor it started at, the next older one, a search and its count. */
  decisionPage?: { before: string | null; older: string | null; query: string; found: number | null };
  query: Record<string, string>;
  csrfToken: string | null;
  notice?: string | null;
  /** The message of a decision made on one row, placed before the row that took its place. */
  placed?: PlacedNotice | null;
  error?: string | null;
}

export function linksPage(o: LinksPageInput): SafeHtml {
  const { view: v } = o;
  const path = tabPath(v.id, 'links');
  return installationShell(
    // The message is shown in the corrections section, where the change was made.
    { view: v, tab: 'links', csrfToken: o.csrfToken, error: o.error },
    html`${correctionsSection({
      view: v,
      linked: o.linked.items,
      linkedTotal: v.coverage.counts.matched,
      linkedNav: html`${listNav({
        path,
        current: o.query,
        params: LINKED_LIST,
        place: o.linked.place,
        total: o.linked.total,
        anchor: 'linked-records',
        label: 'Linked records',
        searchPaged: o.linked.paged === true,
        searchHint: 'A record id, a report’s slug, or a company name (or part of one, asked of the CRM).',
      })}${searchNote(o.linked)}`,
      runs: o.runs,
      csrf: o.csrfToken,
      error: o.error ?? null,
      back: returnQuery(o.query),
      placed: o.placed ?? null,
      notice: o.notice ?? null,
    })}
    ${notPublishedSection(v, o.notPublished, path, o.query)}
    ${decisionLogSection({
      view: v,
      decisions: o.decisions,
      total: o.decisionCount,
      limit: DECISION_LOG_SIZE,
      nav: decisionNav(
        path,
        o.query,
        o.decisionPage ?? { before: null, older: null, query: '', found: null },
      ),
      undoable: new Set((o.massActions ?? []).filter((m) => !m.undoneBy).map((m) => m.id)),
      csrf: o.csrfToken,
      ...(o.logWords ? { words: o.logWords } : {}),
    })}
    ${massActionsSection({ installationId: v.id, actions: o.massActions ?? [], csrf: o.csrfToken, ...(o.logWords ? { words: o.logWords } : {}) })}`,
  );
}

export function searchNote<T>(part: ListPart<T>): SafeHtml | string {
  if (!part.place.query) return '';
  return html`<p class="hint" role="status">${num(part.total)} found for “${part.place.query}”${part.total > part.items.length && !part.paged ? html`, the first ${num(part.items.length)} shown` : ''}.</p>${part.note ? html`<p class="hint" data-search-note>${part.note}</p>` : ''}`;
}

function notPublishedSection(
  v: InstallationView,
  part: ListPart<NotPublishedItem>,
  path: string,
  query: Record<string, string>,
): SafeHtml {
  const total = v.coverage.counts.not_published;
  const rows = part.items.map(
    (item) => html`<tr>
      <th scope="row" data-label="Company">${item.name ?? `Record ${item.recordId}`}<br>${recordLink(v.id, item.recordId)}</th>
      <td data-label="Report"><code>${item.slug ?? '—'}</code></td>
    </tr>`,
  );
  return html`<section class="card" aria-labelledby="not-published">
    <h2 id="not-published">Reports not published (${num(total)})</h2>
    <p>These records carry a report's slug whose report the service does not publish (yet, or any more): the
      connector writes no score for them. What to do: if the report is being made, nothing: the record is linked and
      scored by itself when the service publishes it (a <code>report.completed</code> event, or the next full
      sync). If the slug is wrong, unlink the record or match it again (above), or set the right slug in the CRM. If
      the report should be published, ask the report service about that slug.</p>
    ${
      total === 0
        ? html`<p>Every linked slug has a published report.</p>`
        : html`${listNav({
            path,
            current: query,
            params: NOT_PUBLISHED_LIST,
            place: part.place,
            total: part.total,
            anchor: 'not-published',
            label: 'Reports not published',
            searchHint: 'A company name (or part of one) or a record id.',
          })}${searchNote(part)}
          ${
            part.items.length === 0
              ? html`<p>No record here.</p>`
              : html`<table class="responsive">
            <caption class="visually-hidden">Records whose report is not published</caption>
            <thead><tr><th scope="col">Company</th><th scope="col">Slug</th></tr></thead>
            <tbody>${rows}</tbody>
          </table>`
          }`
    }
  </section>`;
}

/** The decision log's search (record id or slug) and its pages by cursor: newest, older. */
function decisionNav(
  path: string,
  query: Record<string, string>,
  p: { before: string | null; older: string | null; query: string; found: number | null },
): SafeHtml {
  const others = Object.entries(query).filter(
    ([k]) => k !== DECISIONS_BEFORE && k !== DECISIONS_QUERY && k !== 'done',
  );
  const href = (changes: Record<string, string>) => {
    const q = new URLSearchParams([...others, ...Object.entries(changes)]).toString();
    return `${path}${q ? `?${q}` : ''}#decisions`;
  };
  return html`<form method="get" action="${path}#decisions" class="list-search" role="search" aria-label="Decision log: search">
      ${others.map(([k, val]) => html`<input type="hidden" name="${k}" value="${val}">`)}
      <label for="decisions-search">Search the decision log</label>
      <span class="slug-row">
        <input id="decisions-search" name="${DECISIONS_QUERY}" type="search" value="${p.query}" spellcheck="false" autocomplete="off">
        <button type="submit" class="secondary">Search</button>
      </span>
      <span class="hint">A record id or a report’s slug.${p.query ? html` · <a href="${href({})}">Show all</a>` : ''}</span>
    </form>
    ${p.query && p.found !== null ? html`<p class="hint" role="status">${num(p.found)} found for “${p.query}”.</p>` : ''}
    ${
      p.query || (!p.before && !p.older)
        ? ''
        : html`<nav class="pager" aria-label="Decision log pages" data-pager="decisions">
      ${p.before ? html`<a href="${href({})}" data-page-link="first">Newest decisions</a>` : ''}
      ${p.older ? html`<a href="${href({ [DECISIONS_BEFORE]: p.older })}" data-page-link="next">Older decisions</a>` : ''}
    </nav>`
    }`;
}
