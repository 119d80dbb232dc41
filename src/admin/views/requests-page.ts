import type { PendingRequestView } from '../admin-actions.js';
import { html, type SafeHtml } from '../html.js';
import type { InstallationView } from '../overview.js';
import { installationShell, tabPath } from './installation-tabs.js';
import { type ListPart, searchNote } from './links-page.js';
import { listNav, listParams } from './list-paging.js';
import { alertSection, type NoMatchItem, noMatchSection, pendingRequestsSection } from './requests.js';

/**
 * `/admin/installations/:id/requests`: companies without a report (a page at a time, searchable) with the form
 * that asks the service for one, the reports requested and not yet published, and the alerts switch.
 */

export const NO_MATCH_LIST = listParams('nm');
export const REQUESTED_LIST = listParams('rq');

export interface RequestsPageInput {
  view: InstallationView;
  noMatch: ListPart<NoMatchItem>;
  pending: ListPart<PendingRequestView>;
  alertActivity: boolean;
  /** Where to install the app again to grant an activity's optional scope; null when none is needed. */
  reinstallUrl: string | null;
  query: Record<string, string>;
  csrfToken: string | null;
  notice?: string | null;
  error?: string | null;
}

export function requestsPage(o: RequestsPageInput): SafeHtml {
  const { view: v } = o;
  const path = tabPath(v.id, 'requests');
  const noMatchNav = html`${listNav({
    path,
    current: o.query,
    params: NO_MATCH_LIST,
    place: o.noMatch.place,
    total: o.noMatch.total,
    anchor: 'no-match',
    label: 'Companies without a report',
    searchHint: 'A company name (or part of one) or a record id.',
  })}${searchNote(o.noMatch)}`;
  const pendingNav = html`${listNav({
    path,
    current: o.query,
    params: REQUESTED_LIST,
    place: o.pending.place,
    total: o.pending.total,
    anchor: 'requests',
    label: 'Requested reports',
    searchHint: 'A company name (or part of one) or a record id.',
  })}${searchNote(o.pending)}`;
  return installationShell(
    { view: v, tab: 'requests', csrfToken: o.csrfToken, notice: o.notice, error: o.error },
    html`${noMatchSection(v, o.noMatch.items, v.coverage.counts.no_match, o.csrfToken, noMatchNav)}
      ${pendingRequestsSection(o.pending.items, { nav: pendingNav, total: o.pending.total })}
      ${alertSection(v, o.alertActivity, o.csrfToken, o.reinstallUrl)}`,
  );
}
