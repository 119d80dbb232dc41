import { html, type SafeHtml } from '../html.js';
import type { InstallationView } from '../overview.js';
import { installationPath, installationTitle, num } from './format.js';
import { layout, notice, problem } from './layout.js';
import { connectionBadge, sandboxBadge } from './parts.js';

/**
 * The installation's pages (overview, review, links, requests and alerts, settings): one title, one row of
 * tabs, the notice of the change just made and the refusal of one that failed. Each page is a module of its
 * own (installation-page.ts is the overview).
 */

export type InstallationTab = 'overview' | 'review' | 'links' | 'requests' | 'settings';

export const TAB_PATHS: Record<InstallationTab, string> = {
  overview: '',
  review: '/review',
  links: '/links',
  requests: '/requests',
  settings: '/settings',
};

const TAB_LABELS: Record<InstallationTab, string> = {
  overview: 'Overview',
  review: 'Review',
  links: 'Links',
  requests: 'Requests and alerts',
  settings: 'Settings',
};

export function tabPath(id: string, tab: InstallationTab, suffix = ''): string {
  return installationPath(id, `${TAB_PATHS[tab]}${suffix}`);
}

export interface InstallationShell {
  view: InstallationView;
  tab: InstallationTab;
  csrfToken: string | null;
  notice?: string | null;
  error?: string | null;
  /** Shown before the page's own sections (the overview's refusal of fixture writes). */
  lead?: SafeHtml | string;
}

export function installationShell(o: InstallationShell, body: SafeHtml): SafeHtml {
  const v = o.view;
  const title = installationTitle(v);
  const counts: Partial<Record<InstallationTab, number>> = {
    review: v.reviewCount,
    links: v.coverage.counts.matched,
    requests: v.coverage.counts.no_match + v.coverage.counts.requested,
  };
  const tabs = (Object.keys(TAB_PATHS) as InstallationTab[]).map((tab) => {
    const count = counts[tab];
    const label = html`${TAB_LABELS[tab]}${count === undefined ? '' : html` <span class="tab-count">(${num(count)})</span>`}`;
    return tab === o.tab
      ? html`<li><a href="${tabPath(v.id, tab)}" aria-current="page" data-tab="${tab}">${label}</a></li>`
      : html`<li><a href="${tabPath(v.id, tab)}" data-tab="${tab}">${label}</a></li>`;
  });
  const pageTitle = o.tab === 'overview' ? title : `${TAB_LABELS[o.tab]} · ${title}`;
  return layout(
    { title: pageTitle, csrfToken: o.csrfToken, section: 'installations', signedIn: true },
    html`<p class="crumbs"><a href="/admin">Installations</a> / ${o.tab === 'overview' ? title : html`<a href="${tabPath(v.id, 'overview')}">${title}</a> / ${TAB_LABELS[o.tab]}`}</p>
      <h1>${title} ${connectionBadge(v)} ${sandboxBadge(v)}</h1>
      <nav class="tabs" aria-label="Installation pages"><ul>${tabs}</ul></nav>
      ${notice(o.notice)}
      ${problem(o.error)}
      ${o.lead ?? ''}
      ${body}`,
  );
}
