import { html, type SafeHtml } from '../html.js';
import type { InstallationView } from '../overview.js';
import { installationPath, installationTitle } from './format.js';
import { installationShell } from './installation-tabs.js';
import { csrfField } from './layout.js';
import { keyDetails, keyForm, rateDetails } from './parts.js';

/** `/admin/installations/:id/settings`: the report-service key, fixture writes, and disconnecting. */

export interface SettingsPageInput {
  view: InstallationView;
  csrfToken: string | null;
  notice?: string | null;
  /** A refused key or fixture-writes form: which and why. */
  error?: { form: 'key' | 'fixtures'; message: string } | null;
}

export function settingsPage(o: SettingsPageInput): SafeHtml {
  const { view: v } = o;
  const title = installationTitle(v);
  return installationShell(
    { view: v, tab: 'settings', csrfToken: o.csrfToken, notice: o.notice, error: o.error?.message },
    html`<section class="card" aria-labelledby="key">
        <h2 id="key">Report-service key</h2>
        ${keyDetails(v)}
        ${rateDetails(v)}
        <div id="key-form">${keyForm(v, o.csrfToken, o.error?.form === 'key' ? o.error.message : null)}</div>
      </section>

      <section class="card" aria-labelledby="fixtures-setting">
        <h2 id="fixtures-setting">Fixture scores</h2>
        ${
          v.allowFixtureWrites
            ? html`<p>The sandbox key's fixture scores are allowed in this CRM.</p>
          <form method="post" action="${installationPath(v.id, '/fixture-writes')}" class="inline-form">
            ${csrfField(o.csrfToken)}<input type="hidden" name="allow" value="false">
            <button type="submit" class="secondary">Refuse fixture scores again</button>
          </form>`
            : html`<p>A sandbox key's fixture scores are ${v.fixtureRefusal ? 'refused in this CRM (see the overview to allow them)' : 'written only to a sandbox CRM'}.</p>`
        }
        ${o.error?.form === 'fixtures' ? html`<p class="problem">${o.error.message}</p>` : ''}
      </section>

      <section class="card danger-zone" aria-labelledby="disconnect">
        <h2 id="disconnect">Disconnect</h2>
        <p>Stops all work for this installation and deletes its tokens, key and link index from the connector. The
          CRM's records keep their values.</p>
        <p><a class="button danger" href="${installationPath(v.id, '/disconnect')}">Disconnect ${title}…</a></p>
      </section>`,
  );
}
