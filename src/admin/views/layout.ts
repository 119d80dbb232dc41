import { html, type SafeHtml } from '../html.js';

/** The page shell: skip link, header with navigation and log-out, and the main landmark. */

export type Section = 'installations' | 'events' | 'none';

export interface LayoutOptions {
  title: string;
  /** The logged-in admin's CSRF token; absent on the login page (no navigation then). */
  csrfToken?: string | null;
  section?: Section;
  /** Whether the admin is logged in (bearer requests see the navigation without log-out). */
  signedIn?: boolean;
}

export const ASSET_PATHS = { css: '/admin/assets/admin.css', js: '/admin/assets/admin.js' } as const;

export function layout(o: LayoutOptions, body: SafeHtml): SafeHtml {
  const current = (s: Section) => (o.section === s ? html` aria-current="page"` : '');
  const nav = o.signedIn
    ? html`<nav aria-label="Admin">
        <ul>
          <li><a href="/admin"${current('installations')}>Installations</a></li>
          <li><a href="/admin/events"${current('events')}>Event log</a></li>
          <li><a href="/admin/queues">Job queues</a></li>
          ${
            o.csrfToken
              ? html`<li>
                  <form method="post" action="/admin/logout" class="inline-form">
                    <input type="hidden" name="_csrf" value="${o.csrfToken}">
                    <button type="submit" class="link-button">Log out</button>
                  </form>
                </li>`
              : ''
          }
        </ul>
      </nav>`
    : '';
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<link rel="icon" href="data:,">
<title>${o.title} · Report connector admin</title>
<link rel="stylesheet" href="${ASSET_PATHS.css}">
<script src="${ASSET_PATHS.js}" defer></script>
</head>
<body>
<a class="skip-link" href="#main">Skip to main content</a>
<header class="site-header">
  <div class="wrap header-row">
    <p class="brand"><a href="/admin">Report connector <span class="brand-sub">admin</span></a></p>
    ${nav}
  </div>
</header>
<main id="main" class="wrap" tabindex="-1">
${body}
</main>
</body>
</html>
`;
}

export function notice(message: string | null | undefined): SafeHtml {
  return message ? html`<div class="notice" role="status"><p>${message}</p></div>` : html``;
}

export function problem(message: string | null | undefined, id?: string): SafeHtml {
  return message
    ? html`<div class="problem" role="alert"${id ? html` id="${id}"` : ''}><p>${message}</p></div>`
    : html``;
}

export function csrfField(token: string | null | undefined): SafeHtml {
  return token ? html`<input type="hidden" name="_csrf" value="${token}">` : html``;
}
