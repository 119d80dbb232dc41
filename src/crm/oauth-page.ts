import type { Request, Response } from 'express';

/**
 * What an OAuth route tells the person in the browser (installed, waiting for approval, refused, not
 * configured), as data: the connector decides the words, the app decides the look. A CRM's routes cannot import
 * the admin's views (docs/layers.md), so the server hands them a renderer in the admin's style through
 * ProviderHost; a router built without one (its own unit tests) falls back to `plainOAuthPage`.
 */

export type OAuthPageTone = 'done' | 'waiting' | 'problem';

export interface OAuthNextStep {
  /** A path on this app (`/admin`, an install link) or a full URL. */
  href: string;
  label: string;
}

export interface OAuthPage {
  status: number;
  tone: OAuthPageTone;
  title: string;
  /** Fixed sentences: never anything from the query string or an upstream error. */
  paragraphs: readonly string[];
  /** What the person can do now, in order; the first is the main one. */
  next: readonly OAuthNextStep[];
}

/** An HTML document for the page. */
export type OAuthPageRenderer = (page: OAuthPage) => string;

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export const plainOAuthPage: OAuthPageRenderer = (page) => {
  const body = page.paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join('\n');
  const next = page.next
    .map((s) => `<li><a href="${escapeHtml(s.href)}">${escapeHtml(s.label)}</a></li>`)
    .join('');
  return (
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(page.title)}</title></head>\n` +
    `<body><h1>${escapeHtml(page.title)}</h1>\n${body}\n${next ? `<h2>Next steps</h2><ul>${next}</ul>` : ''}\n</body></html>\n`
  );
};

/** A result page is about one attempt: never cached. */
export function sendOAuthPage(
  res: Response,
  page: OAuthPage,
  render: OAuthPageRenderer = plainOAuthPage,
): void {
  res.status(page.status).type('html').set('cache-control', 'no-store').send(render(page));
}

/** Where the operator manages one installation (the admin's installation page). */
export function adminInstallationPath(installationId: string): string {
  return `/admin/installations/${encodeURIComponent(installationId)}`;
}

export interface InstalledFacts {
  /** The CRM's name ("the CRM" words come from the provider, never from src/). */
  crmLabel: string;
  /** "portal", "org". */
  accountNoun: string;
  /** The portal's or org's id or name. */
  account: string;
  installationId: string;
  /** The connector's fields and where they show, for people: "its fields on companies". */
  whereScoresShow: string;
  /** An install done again on an installation that was there before (a reconnect). */
  reconnected: boolean;
}

/** An OAuth install the operator has not let in yet: nothing runs until then. */
export function waitingForApprovalPage(f: InstalledFacts, extra: readonly string[] = []): OAuthPage {
  return {
    status: 200,
    tone: 'waiting',
    title: 'Installed: waiting for approval',
    paragraphs: [
      `The app is installed in the ${f.crmLabel} ${f.accountNoun} ${f.account}. It starts once the app's operator approves the installation; until then it reads and writes nothing.`,
      `Nothing more is needed in ${f.crmLabel}: you can close this page. Once approved, the connector creates its fields, starts the first sync, and ${f.whereScoresShow}.`,
      `If you run the connector: open the installation on the admin page (it asks for the admin token, ADMIN_TOKEN), preview what a first sync would do, then approve it. An ${f.accountNoun} listed in INSTALL_ALLOWLIST is let in without waiting.`,
      ...extra,
    ],
    next: [{ href: adminInstallationPath(f.installationId), label: 'Open it on the admin page' }],
  };
}

/** An install that is let in and running (new, or a reconnect of one approved before). */
export function connectedPage(f: InstalledFacts, extra: readonly string[] = []): OAuthPage {
  return {
    status: 200,
    tone: 'done',
    title: f.reconnected ? `${f.crmLabel} is reconnected` : `${f.crmLabel} is connected`,
    paragraphs: [
      f.reconnected
        ? `The ${f.crmLabel} ${f.accountNoun} ${f.account} is connected again with fresh tokens; syncing resumes where it stopped.`
        : `The ${f.crmLabel} ${f.accountNoun} ${f.account} is connected and its first sync has started.`,
      `You can close this page: ${f.whereScoresShow}. The admin page (coverage, the review queue, sync history) asks for the connector's admin token, ADMIN_TOKEN, which its operator holds.`,
      ...extra,
    ],
    // The admin says it is connected to its operator, and tells anyone else at its login why they are there.
    next: [{ href: adminInstalledPath(f), label: 'Open it on the admin page' }],
  };
}

/** The admin after an install that is let in (`installed=`, and `reconnected=1` for a reconnect). */
export function adminInstalledPath(f: Pick<InstalledFacts, 'installationId' | 'reconnected'>): string {
  return `/admin?installed=${encodeURIComponent(f.installationId)}${f.reconnected ? '&reconnected=1' : ''}`;
}

/** The install route of a CRM whose OAuth app is not configured, naming every missing variable. */
export function notConfiguredPage(o: {
  crmLabel: string;
  missing: readonly string[];
  /** What the variables are, for people. */
  explain: string;
  /** Another way in that works today, if any. */
  otherwise?: string;
}): OAuthPage {
  return {
    status: 503,
    tone: 'problem',
    title: `${o.crmLabel} install is not configured`,
    paragraphs: [
      `This app cannot install into ${o.crmLabel} yet: ${o.missing.join(' and ')} ${o.missing.length === 1 ? 'is' : 'are'} not set.`,
      `${o.explain} Set ${o.missing.length === 1 ? 'it' : 'them'} in the connector's environment and restart it.`,
      ...(o.otherwise ? [o.otherwise] : []),
    ],
    next: [{ href: '/admin', label: 'Open the admin page' }],
  };
}

/**
 * A not-configured answer as a page for browsers (they always ask for text/html) and JSON for everything else
 * (curl, scripts, health checks), so neither reads the other's format.
 */
export function sendNotConfigured(
  req: Request,
  res: Response,
  page: OAuthPage,
  missing: readonly string[],
  render?: OAuthPageRenderer,
): void {
  if (!/text\/html/i.test(req.get('accept') ?? '')) {
    res
      .status(page.status)
      .set('cache-control', 'no-store')
      .json({ error: page.paragraphs.join(' '), code: 'OAUTH_NOT_CONFIGURED', missing });
    return;
  }
  sendOAuthPage(res, page, render);
}
