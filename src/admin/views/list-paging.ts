import { html, type SafeHtml } from '../html.js';
import { num } from './format.js';

/**
 * Paging and search for the installation's lists. Each list on a page has its own query names (`<key>-page`,
 * `<key>-q`; the review queue keeps its older `page`, `per` and `q`), so paging one list keeps the others where
 * they are. A page link keeps every other list's place and the list's anchor.
 */

export interface ListPlace {
  /** 1-based page, clamped to the pages there are. */
  page: number;
  per: number;
  /** The search, trimmed; '' for none. */
  query: string;
}

export interface ListParams {
  /** Query names of this list's page and search. */
  pageParam: string;
  queryParam: string;
}

export function listParams(key: string | null): ListParams {
  return key === null
    ? { pageParam: 'page', queryParam: 'q' }
    : { pageParam: `${key}-page`, queryParam: `${key}-q` };
}

const MAX_PAGE = 100_000;
const MAX_QUERY = 200;

/** This list's place from the request's query (bad values read as the first page, no search). */
export function listPlace(query: Record<string, unknown>, params: ListParams, per: number): ListPlace {
  const rawPage = Number(query[params.pageParam]);
  const page = Number.isInteger(rawPage) && rawPage >= 1 ? Math.min(rawPage, MAX_PAGE) : 1;
  const rawQuery = query[params.queryParam];
  const q = typeof rawQuery === 'string' ? rawQuery.trim().slice(0, MAX_QUERY) : '';
  return { page, per, query: q };
}

export function pageCount(total: number, per: number): number {
  return Math.max(1, Math.ceil(total / per));
}

/** A link to the same page with this list at another page (or search), the other lists' places kept. */
function hrefWith(
  path: string,
  current: Record<string, string>,
  changes: Record<string, string | null>,
  anchor: string,
): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...current, ...changes })) {
    if (v !== null && v !== '' && k !== 'done') q.set(k, v);
  }
  const s = q.toString();
  return `${path}${s ? `?${s}` : ''}#${anchor}`;
}

export interface ListNavInput {
  /** The page's path, without query. */
  path: string;
  /** The request's query (strings only), to keep the other lists' places. */
  current: Record<string, string>;
  params: ListParams;
  place: ListPlace;
  total: number;
  /** The list's anchor (its heading's id). */
  anchor: string;
  /** What the list holds, for the navigation's label: "Linked records". */
  label: string;
  /** The search box's hint: what it finds. */
  searchHint: string;
  /** The search's answer is paged too (a search that keeps only its first matches is not). */
  searchPaged?: boolean;
}

/** The search form (GET, keeps the other lists' places) and the pager: first, previous, page x of y, next, last. */
export function listNav(o: ListNavInput): SafeHtml {
  const pages = pageCount(o.total, o.place.per);
  const page = Math.min(o.place.page, pages);
  const link = (n: number, text: string, rel: string) =>
    html`<a href="${hrefWith(o.path, o.current, { [o.params.pageParam]: n === 1 ? null : String(n) }, o.anchor)}" data-page-link="${rel}">${text}</a>`;
  const kept = Object.entries(o.current).filter(
    ([k]) => k !== o.params.pageParam && k !== o.params.queryParam && k !== 'done',
  );
  const searchId = `${o.anchor}-search`;
  return html`<form method="get" action="${o.path}#${o.anchor}" class="list-search" role="search" aria-label="${o.label}: search">
      ${kept.map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}
      <label for="${searchId}">Search ${o.label.toLowerCase()}</label>
      <span class="slug-row">
        <input id="${searchId}" name="${o.params.queryParam}" type="search" value="${o.place.query}" spellcheck="false" autocomplete="off" aria-describedby="${searchId}-hint">
        <button type="submit" class="secondary">Search</button>
      </span>
      <span class="hint" id="${searchId}-hint">${o.searchHint}${o.place.query ? html` · <a href="${hrefWith(o.path, o.current, { [o.params.queryParam]: null, [o.params.pageParam]: null }, o.anchor)}">Show all</a>` : ''}</span>
    </form>
    ${
      (o.place.query && !o.searchPaged) || pages <= 1
        ? ''
        : html`<nav class="pager" aria-label="${o.label} pages" data-pager="${o.anchor}">
      ${page > 1 ? html`${link(1, 'First page', 'first')} ${link(page - 1, 'Previous page', 'prev')}` : ''}
      <span>Page ${num(page)} of ${num(pages)}</span>
      ${page < pages ? html`${link(page + 1, 'Next page', 'next')} ${link(pages, 'Last page', 'last')}` : ''}
    </nav>`
    }`;
}

/** The request's query as strings (repeated names keep their first value). */
export function queryStrings(query: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(query)) {
    const first = Array.isArray(v) ? v[0] : v;
    if (typeof first === 'string') out[k] = first;
  }
  return out;
}
