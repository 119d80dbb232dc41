import { Router } from 'express';
import { html, type SafeHtml } from '../admin/html.js';
import { adminPageHeaders } from '../admin/security-headers.js';
import { layout } from '../admin/views/layout.js';
import type { CrmProvider } from '../crm/provider.js';
import { type ListingGuide, PUBLIC_PAGE_PATHS, supportEmailFor } from '../crm/public-pages.js';
import { providers } from '../providers.js';

/**
 * The two pages a marketplace listing links to, public (no sign-in: a listing's review refuses a setup guide
 * behind one) and distinct (the listing's URLs may not repeat): `/docs/setup`, how to install, connect,
 * configure, use, disconnect and uninstall the app and what each leaves in the CRM, and `/support`, how to
 * reach the people who run this deployment. They hold no deployment data: no installation, token or count,
 * only APP_URL-derived links and the support address the listing names. Every CRM-specific word comes from the
 * providers (their `listingGuide`); this file lays it out and escapes it.
 */

/** What the pages read of a provider. */
export type PublicPageCrm = Pick<
  CrmProvider<string, unknown, unknown>,
  'label' | 'accountNoun' | 'installPath' | 'listingGuide'
>;

interface Guided {
  label: string;
  installPath: string;
  guide: ListingGuide;
}

/** A heading one level below the CRM's own when the guide covers several CRMs. */
function heading(nested: boolean, text: string): SafeHtml {
  return nested ? html`<h3>${text}</h3>` : html`<h2>${text}</h2>`;
}

function guideSections(appUrl: string, { label, installPath, guide }: Guided, nested: boolean): SafeHtml {
  const install = `${appUrl}${installPath}`;
  const { scopes, optionalScopes } = guide.install;
  return html`<section>
      ${nested ? html`<h2>${label}</h2>` : ''}
      <p>${guide.summary}</p>

      ${heading(nested, `Install the app and connect your ${guide.account}`)}
      <ol>
        <li>Open <a href="${install}">${install}</a> (or ${guide.install.alternative}).</li>
        ${guide.install.signIn.map((step) => html`<li>${step}</li>`)}
        <li>${guide.install.consent}
          <ul>
            ${scopes.map((s) => html`<li><code>${s.scope}</code>: ${s.purpose}</li>`)}
          </ul>
          ${optionalScopes.map((s) => html`An optional scope, <code>${s.scope}</code>, is asked for only ${s.when}.`)}</li>
        ${guide.install.after.map((step) => html`<li>${step}</li>`)}
      </ol>

      ${heading(nested, 'Configure it')}
      ${guide.configure.map((paragraph) => html`<p>${paragraph}</p>`)}

      ${heading(nested, 'Use it')}
      <ul>
        ${guide.use.map((item) => html`<li>${item}</li>`)}
      </ul>

      ${heading(nested, 'Disconnect or uninstall')}
      <ol>
        ${guide.uninstall.steps.map((step) => html`<li>${step}</li>`)}
      </ol>
      <p>${guide.uninstall.consequences} The service's own copy of your account's tokens and link records is
        deleted when the people who run it remove the installation; write to them (see
        <a href="${PUBLIC_PAGE_PATHS.support}">Support</a>) to have it removed at once.</p>
    </section>`;
}

function setupPage(appUrl: string, crms: readonly PublicPageCrm[]): SafeHtml {
  const guided = crms.flatMap(({ label, installPath, listingGuide }) =>
    listingGuide ? [{ label, installPath, guide: listingGuide }] : [],
  );
  const title = guided.length
    ? `Setting up Report scores for ${guided.map((g) => g.label).join(' or ')}`
    : 'Setting up Report scores';
  return layout(
    { title },
    html`<article class="public-page">
      <h1>${title}</h1>
      ${
        guided.length
          ? guided.map((g) => guideSections(appUrl, g, guided.length > 1))
          : html`<p>Ask <a href="${PUBLIC_PAGE_PATHS.support}">support</a> how to set up the app.</p>`
      }
    </article>`,
  );
}

function supportPage(appUrl: string, crms: readonly PublicPageCrm[]): SafeHtml {
  const email = supportEmailFor(appUrl);
  const accounts = crms.map((c) => c.listingGuide?.supportAccount ?? `${c.label} ${c.accountNoun}`);
  return layout(
    { title: 'Report scores: support' },
    html`<article class="public-page">
      <h1>Support</h1>
      <p>Write to <a href="mailto:${email}">${email}</a>. Say which ${accounts.join(' or ')} it is about, the
        company record, and what you saw and expected.</p>
      <p>Setting up, using or removing the app: <a href="${PUBLIC_PAGE_PATHS.setup}">the setup guide</a>.</p>
    </article>`,
  );
}

/** `crms`: the registered providers; a test may hand others. */
export function createPublicPagesRouter(appUrl: string, crms: readonly PublicPageCrm[] = providers): Router {
  const router = Router();
  const base = appUrl.replace(/\/+$/, '');
  // The admin look (its stylesheet), without its caching rules: these pages hold nothing private.
  const headers = adminPageHeaders(base.startsWith('https:'));
  const setup = setupPage(base, crms).value;
  const support = supportPage(base, crms).value;
  router.get(PUBLIC_PAGE_PATHS.setup, headers, (_req, res) => {
    res.type('html').send(setup);
  });
  router.get(PUBLIC_PAGE_PATHS.support, headers, (_req, res) => {
    res.type('html').send(support);
  });
  return router;
}
