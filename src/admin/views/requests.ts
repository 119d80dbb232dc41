import { providerFor } from '../../providers.js';
import type { PendingRequestView } from '../admin-actions.js';
import { html, type SafeHtml } from '../html.js';
import type { InstallationView } from '../overview.js';
import { rematchForm } from './corrections.js';
import { installationPath, num, time } from './format.js';
import { csrfField } from './layout.js';
import { recordLink, recordPath } from './record-page.js';

/** The pieces of the installation page about requested reports and alerts. */

export interface NoMatchItem {
  recordId: string;
  /** The CRM's name when it could be read, else the normalised one the connector keeps. */
  name: string | null;
  /** As the CRM has them, when it could be read. */
  domain?: string | null;
  country?: string | null;
  /**
   * What the company has already, found since the list was made: a report linked (in the CRM or by a sync), or
   * a request waiting. No request is offered then.
   */
  has?: { kind: 'report'; slug: string } | { kind: 'requested'; at: string } | null;
}

/** What a listed company already has, instead of the request form. */
function already(v: Pick<InstallationView, 'id'>, item: NoMatchItem): SafeHtml | null {
  const has = item.has;
  if (!has) return null;
  return has.kind === 'report'
    ? html`<p data-has-report>Has a report now: <code>${has.slug}</code> (<a href="${recordPath(v.id, item.recordId)}">see the record</a>). Nothing to request.</p>`
    : html`<p data-has-request>A report was requested on ${time(has.at)}: it waits for the service (Requested reports, below).</p>`;
}

/** Domain and country on the name's line: an admin tells two companies of one name apart by them. */
function placeOf(item: NoMatchItem): string {
  return [item.domain, item.country].filter((p): p is string => Boolean(p)).join(' · ');
}

/** "Request a report": one form per record, with an optional document; the CSRF token travels in the form. */
export function requestForm(
  installationId: string,
  recordId: string,
  who: string,
  csrf: string | null,
): SafeHtml {
  const action = installationPath(installationId, `/records/${encodeURIComponent(recordId)}/request`);
  const fileId = `document-${recordId}`;
  return html`<form method="post" action="${action}" enctype="multipart/form-data" class="request-form">
    ${csrfField(csrf)}
    <label for="${fileId}">Document for the report service (optional, up to 10 MB)</label>
    <span class="slug-row">
      <input id="${fileId}" name="document" type="file">
      <button type="submit" class="secondary">Request a report<span class="visually-hidden"> for ${who}</span></button>
    </span>
  </form>`;
}

export function age(seconds: number): string {
  if (seconds < 90) return `${seconds} s`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min`;
  if (seconds < 48 * 3600) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86400)} days`;
}

export function noMatchSection(
  v: InstallationView,
  items: readonly NoMatchItem[],
  total: number,
  csrf: string | null,
  /** The list's search and pager (requests-page.ts). */
  nav?: SafeHtml,
): SafeHtml {
  const rows = items.map((item) => {
    const company = item.name ?? `Record ${item.recordId}`;
    const place = placeOf(item);
    const has = already(v, item);
    return html`<li class="no-match-item">
      <p><strong>${company}</strong> <span class="hint">${place ? html`<span data-place>${place}</span> · ` : ''}record ${recordLink(v.id, item.recordId)}</span></p>
      ${
        has ??
        html`${requestForm(v.id, item.recordId, `${company}, record ${item.recordId}`, csrf)}
      ${rematchForm(v, item.recordId, `${company}, record ${item.recordId}`, csrf)}`
      }
    </li>`;
  });
  return html`<section class="card" aria-labelledby="no-match">
    <h2 id="no-match">Companies without a report (${num(total)})</h2>
    <p>No published report matches these companies. Ask the report service for one: the connector sends what the
      CRM knows (name, domain, country, city, industry and the record id), and the record shows
      <code>requested</code> until the report is published, then it is linked and scored by itself. The key needs
      the <code>write</code> scope.</p>
    ${nav ?? ''}
    ${items.length === 0 ? html`<p>${total === 0 ? 'Every processed company has a report or waits for review.' : 'No company here.'}</p>` : html`<ul class="plain-list">${rows}</ul>`}
    ${!nav && total > items.length ? html`<p class="hint">Showing ${num(items.length)} of ${num(total)}.</p>` : ''}
  </section>`;
}

export function pendingRequestsSection(
  pending: readonly PendingRequestView[],
  /** The list's search and pager, and how many wait in all (requests-page.ts). */
  paged?: { nav: SafeHtml; total: number },
): SafeHtml {
  const rows = pending.map(
    (r) => html`<tr>
      <th scope="row" data-label="Company">${r.name ?? '—'}<br><code>${r.recordId}</code></th>
      <td data-label="Submission"><code>${r.submissionId}</code></td>
      <td data-label="Requested">${time(r.requestedAt)}</td>
      <td data-label="Waiting" class="num">${age(r.ageSeconds)}</td>
      <td data-label="Document">${r.document ? (r.document.error ? html`not attached: ${r.document.error}` : r.document.filename) : '—'}</td>
    </tr>`,
  );
  return html`<section class="card" aria-labelledby="requests">
    <h2 id="requests">Requested reports (${num(paged?.total ?? pending.length)})</h2>
    ${paged?.nav ?? ''}
    ${
      pending.length === 0
        ? html`<p>No report is being waited for.</p>`
        : html`<table class="responsive">
            <caption class="visually-hidden">Reports requested and not yet published</caption>
            <thead><tr><th scope="col">Company</th><th scope="col">Submission</th><th scope="col">Requested</th>
              <th scope="col">Waiting</th><th scope="col">Document</th></tr></thead>
            <tbody>${rows}</tbody>
          </table>`
    }
  </section>`;
}

export function alertSection(
  v: InstallationView,
  alertActivity: boolean,
  csrf: string | null,
  reinstallUrl: string | null,
): SafeHtml {
  const action = installationPath(v.id, '/alert-activity');
  const { activity } = providerFor(v.crm);
  return html`<section class="card" aria-labelledby="alerts">
    <h2 id="alerts">Alerts</h2>
    <p>Every <code>alert.fired</code> for a linked report sets <code>report_alert</code> and
      <code>report_alert_at</code> on each linked record, so CRM workflows can act on them.</p>
    <form method="post" action="${action}" class="inline-form">
      ${csrfField(csrf)}
      <input type="hidden" name="on" value="${alertActivity ? 'false' : 'true'}">
      <p>Also add ${activity.noun} for each alert: <strong>${alertActivity ? 'on' : 'off'}</strong>.</p>
      <button type="submit" class="secondary">${alertActivity ? 'Switch off' : 'Switch on'}<span class="visually-hidden"> alert activities</span></button>
    </form>
    <p class="hint">${activity.needs}</p>
    ${
      !activity.grant
        ? ''
        : reinstallUrl
          ? html`<p>After switching it on: <a href="${reinstallUrl}">${activity.grant.label}</a></p>`
          : html`<p class="hint">${activity.grant.tokenMode}</p>`
    }
  </section>`;
}
