import { Router } from 'express';
import { html, type SafeHtml } from '../admin/html.js';
import { adminPageHeaders } from '../admin/security-headers.js';
import { layout } from '../admin/views/layout.js';
import { PUBLIC_PAGE_PATHS, supportEmailFor } from '../crm/public-pages.js';

/**
 * The two pages a marketplace listing links to, public (no sign-in: HubSpot's review refuses a setup guide
 * behind one) and distinct (the listing's URLs may not repeat): `/docs/setup`, how to install, connect,
 * configure, use, disconnect and uninstall the HubSpot app and what each leaves in the portal, and `/support`,
 * how to reach the people who run this deployment. They hold no deployment data: no installation, token or
 * count, only APP_URL-derived links and the support address the listing names.
 */

/** What each scope the install asks for is used for; the test keeps this list equal to the app's scopes. */
export const HUBSPOT_SCOPE_PURPOSES: readonly { scope: string; purpose: string }[] = [
  { scope: 'oauth', purpose: 'sign the app in to your account (every HubSpot app asks for it)' },
  { scope: 'crm.objects.companies.read', purpose: 'read company names, domains and the report fields' },
  { scope: 'crm.objects.companies.write', purpose: 'write the report score and its details on companies' },
  { scope: 'crm.schemas.companies.write', purpose: 'create the "Report scores" company properties once' },
];

function setupPage(appUrl: string): SafeHtml {
  const install = `${appUrl}/oauth/hubspot/install`;
  return layout(
    { title: 'Setting up Report scores for HubSpot' },
    html`<article class="public-page">
      <h1>Setting up Report scores for HubSpot</h1>
      <p>Report scores links each HubSpot company to its published report and keeps the report's score, band,
        pillars, verification and alerts on the company record, up to date as reports change.</p>

      <h2>Install the app and connect your HubSpot account</h2>
      <ol>
        <li>Open <a href="${install}">${install}</a> (or choose Install on the app's Marketplace listing).</li>
        <li>Sign in to HubSpot if asked, and choose the account to connect.</li>
        <li>Review the access the app asks for and choose Connect app:
          <ul>
            ${HUBSPOT_SCOPE_PURPOSES.map((s) => html`<li><code>${s.scope}</code>: ${s.purpose}</li>`)}
          </ul>
          An optional scope, <code>crm.objects.contacts.write</code>, is asked for only if alert notes are turned
          on for your account (they add a note to the company's timeline when an alert fires).</li>
        <li>You land on a page saying the account is installed, or installed and waiting for approval: a new
          account waits until the people who run this service approve it, and nothing is read or written in
          HubSpot until then.</li>
      </ol>

      <h2>Configure it</h2>
      <p>Nothing has to be set in HubSpot. Once approved, the app creates the company properties of the group
        "Report scores" (Report slug, Report score, Report band and the others) and links your companies to their
        reports. To show the score on company records, a Super Admin (or a user allowed to customize record page
        layouts) adds the "Report score" card to the company record, as a tab or in the right sidebar.</p>

      <h2>Use it</h2>
      <ul>
        <li>Automatically: a company is linked to a published report only when the names match exactly (domain,
          industry and location help find candidates); a close but uncertain match waits for a person to confirm
          it. Linked companies' report properties are written and kept current when a report is scored again,
          verified or raises an alert.</li>
        <li>By hand: type a report's slug into the company's "Report slug" property to choose the report; in the
          card, confirm a proposed match ("This one" / "None of these") or request a report for a company that has
          none.</li>
      </ul>

      <h2>Disconnect or uninstall</h2>
      <ol>
        <li>In HubSpot, open Settings &gt; Integrations &gt; Connected apps.</li>
        <li>Find Report scores in the list, uninstall it, and confirm.</li>
      </ol>
      <p>After uninstalling, the app can no longer read or write anything in your account and stops updating
        companies. What stays: the "Report scores" properties and the values already written on your companies
        remain in HubSpot until you delete them (Settings &gt; Properties, group "Report scores"); deleting them
        removes the values from every company. The service's own copy of your account's tokens and link records is
        deleted when the people who run it remove the installation; write to them (see
        <a href="${PUBLIC_PAGE_PATHS.support}">Support</a>) to have it removed at once.</p>
    </article>`,
  );
}

function supportPage(appUrl: string): SafeHtml {
  const email = supportEmailFor(appUrl);
  return layout(
    { title: 'Report scores: support' },
    html`<article class="public-page">
      <h1>Support</h1>
      <p>Write to <a href="mailto:${email}">${email}</a>. Say which HubSpot account (its account id, shown in
        HubSpot under your account name) or Salesforce org it is about, the company record, and what you saw
        and expected.</p>
      <p>Setting up, using or removing the app: <a href="${PUBLIC_PAGE_PATHS.setup}">the setup guide</a>.</p>
    </article>`,
  );
}

export function createPublicPagesRouter(appUrl: string): Router {
  const router = Router();
  const base = appUrl.replace(/\/+$/, '');
  // The admin look (its stylesheet), without its caching rules: these pages hold nothing private.
  const headers = adminPageHeaders(base.startsWith('https:'));
  const setup = setupPage(base).value;
  const support = supportPage(base).value;
  router.get(PUBLIC_PAGE_PATHS.setup, headers, (_req, res) => {
    res.type('html').send(setup);
  });
  router.get(PUBLIC_PAGE_PATHS.support, headers, (_req, res) => {
    res.type('html').send(support);
  });
  return router;
}
