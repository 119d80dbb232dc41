import type { OAuthPage } from '../../crm/oauth-page.js';
import { html, type SafeHtml } from '../html.js';
import { layout } from './layout.js';

/**
 * An OAuth route's result (installed, waiting for approval, refused, not configured) in the admin's look. The
 * person reading it is often a CRM admin who has no admin token, so it has no navigation and says what happens
 * next in words, with the links to follow.
 */
export function oauthResultPage(page: OAuthPage): SafeHtml {
  const box = page.tone === 'problem' ? 'problem' : 'notice';
  const role = page.tone === 'problem' ? 'alert' : 'status';
  const [first, ...rest] = page.paragraphs;
  return layout(
    { title: page.title },
    html`<div class="oauth-result" data-tone="${page.tone}">
      <h1>${page.title}</h1>
      ${first ? html`<div class="${box}" role="${role}"><p>${first}</p></div>` : ''}
      ${rest.map((p) => html`<p>${p}</p>`)}
      ${
        page.next.length > 0
          ? html`<h2>Next steps</h2>
            <ul class="next-steps">
              ${page.next.map(
                (s, i) =>
                  html`<li><a href="${s.href}"${i === 0 ? html` class="button"` : ''}>${s.label}</a></li>`,
              )}
            </ul>`
          : ''
      }
    </div>`,
  );
}
