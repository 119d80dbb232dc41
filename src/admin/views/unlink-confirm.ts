import { html, type SafeHtml } from '../html.js';
import { installationPath } from './format.js';
import { csrfField, layout } from './layout.js';
import { recordLink } from './record-page.js';

/**
 * The confirmation of a single unlink: like a mass action, it is shown before it is done (the record, the
 * report it holds now, what unlinking does and how to take it back). Its form posts the same request again
 * with `confirm`, and the list place the row was in; "Keep the link" goes back there.
 */

export interface UnlinkConfirmInput {
  installationId: string;
  installationTitle: string;
  recordId: string;
  /** The CRM's name of the record, when it could be read. */
  name: string | null;
  /** The slug the record holds now, if any. */
  slug: string | null;
  /** Where the form posts (the unlink route it was asked on). */
  action: string;
  /** The form's own fields sent again: `recordId` of a look-up, `return`, `next`. */
  fields: readonly (readonly [string, string])[];
  cancelHref: string;
  csrfToken: string | null;
}

export function unlinkConfirmPage(o: UnlinkConfirmInput): SafeHtml {
  const company = o.name ?? `Record ${o.recordId}`;
  return layout(
    { title: `Confirm: unlink ${company}`, csrfToken: o.csrfToken, section: 'installations', signedIn: true },
    html`<p class="crumbs"><a href="/admin">Installations</a> / <a href="${installationPath(o.installationId)}">${o.installationTitle}</a> / Confirm</p>
      <h1>Unlink ${company}?</h1>
      <section class="card" aria-labelledby="unlink-what">
        <h2 id="unlink-what">What unlinking does</h2>
        <p>Record ${recordLink(o.installationId, o.recordId)}${o.name ? html` (${o.name})` : ''} is linked to
          ${o.slug ? html`<code>${o.slug}</code>` : 'no report now'}. Unlinking empties every report field on the
          CRM record and makes it <code>no_match</code> by your decision: matching never links it again until a
          person sets a slug or you ask for a re-match.</p>
        <p class="hint">To take it back later: “Match a record again” on the links page (matching then runs for
          it as for a new record), or set the slug in the CRM.</p>
        <form method="post" action="${o.action}" class="button-row">
          ${csrfField(o.csrfToken)}
          ${o.fields.map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}
          <input type="hidden" name="confirm" value="unlink">
          <button type="submit" class="danger" autofocus>Unlink ${company}</button>
          <a href="${o.cancelHref}">Keep the link</a>
        </form>
      </section>`,
  );
}
