import type { ActivityOutcome } from '../../alerts/alert-store.js';
import { isCrmKind, providerFor } from '../../providers.js';
import type { EventLogEntry } from '../../storage/event-log.js';
import { html, type SafeHtml } from '../html.js';
import type { InstallationView } from '../overview.js';
import { installationPath, installationTitle, time } from './format.js';
import { csrfField, layout } from './layout.js';

/** The event log, the disconnect confirmation and the error page. */

/** Who sent an event, for people; a CRM no longer registered shows as its stored kind. */
function sourceLabel(source: EventLogEntry['source']): string {
  if (source === 'reports') return 'Report service';
  return isCrmKind(source) ? providerFor(source).label : source;
}

/** What an alert's activity job did in one installation, for people. */
function activityLine(installationId: string, a: ActivityOutcome): SafeHtml {
  const noun = isCrmKind(a.crm) ? providerFor(a.crm).activity.noun : 'activity';
  const where = html`<a href="${installationPath(installationId)}">${installationId}</a>`;
  const count = (n: number) => `${n} record${n === 1 ? '' : 's'}`;
  const already = a.already > 0 ? `, ${count(a.already)} had it already` : '';
  switch (a.state) {
    case 'created':
      return html`<span class="activity" data-state="created">${where}: ${noun} created on ${count(a.created)}${already}</span>`;
    case 'failed':
      return html`<span class="activity problem-text" data-state="failed">${where}: ${noun} failed${a.created > 0 ? ` after ${count(a.created)}` : ''} (${a.reason ?? 'no reason given'})</span>`;
    case 'skipped':
      return html`<span class="activity" data-state="skipped">${where}: ${noun} skipped (${a.reason ?? 'nothing to do'})</span>`;
  }
}

export function eventsPage(o: {
  events: readonly EventLogEntry[];
  /** Per alert event id, the activity outcome of each installation (alert-store.ts). */
  activities?: ReadonlyMap<string, ReadonlyMap<string, ActivityOutcome>>;
  csrfToken: string | null;
}): SafeHtml {
  const activitiesOf = (e: EventLogEntry) => [...(o.activities?.get(e.id) ?? new Map())];
  const rows = o.events.map(
    (e) => html`<tr>
      <td data-label="Received">${time(e.receivedAt)}</td>
      <td data-label="Source">${sourceLabel(e.source)}</td>
      <td data-label="Type">${e.type}</td>
      <td data-label="Report">${e.slug ? html`<code>${e.slug}</code>` : '—'}</td>
      <td data-label="Outcome">${e.outcome}${e.detail ? html`<br><span class="hint">${e.detail}</span>` : ''}${activitiesOf(
        e,
      ).map(([id, a]) => html`<br>${activityLine(id, a)}`)}</td>
      <td data-label="Event id"><code>${e.id}</code></td>
    </tr>`,
  );
  return layout(
    { title: 'Event log', csrfToken: o.csrfToken, section: 'events', signedIn: true },
    html`<h1>Event log</h1>
      <p>The most recent webhook events received, newest first, with what the connector did with each.</p>
      ${
        o.events.length === 0
          ? html`<p>No events have arrived yet.</p>`
          : html`<table class="responsive">
              <caption class="visually-hidden">Recent webhook events</caption>
              <thead><tr><th scope="col">Received</th><th scope="col">Source</th><th scope="col">Type</th>
                <th scope="col">Report</th><th scope="col">Outcome</th><th scope="col">Event id</th></tr></thead>
              <tbody>${rows}</tbody>
            </table>`
      }`,
  );
}

export function disconnectPage(o: { view: InstallationView; csrfToken: string | null }): SafeHtml {
  const title = installationTitle(o.view);
  return layout(
    { title: `Disconnect ${title}`, csrfToken: o.csrfToken, section: 'installations', signedIn: true },
    html`<h1>Disconnect ${title}?</h1>
      <ul>
        <li>Syncs, updates and change polling for this installation stop.</li>
        <li>An app installed through OAuth is uninstalled from the CRM (its tokens are revoked there); if the CRM
          cannot be reached, the next page says so and what to do in the CRM.</li>
        <li>Its CRM tokens, its report-service key and the connector's link index are deleted here.</li>
        <li>The records in the CRM keep the values already written.</li>
        <li>To use the connector again, install the app again.</li>
      </ul>
      <form method="post" action="${installationPath(o.view.id, '/disconnect')}" class="button-row">
        ${csrfField(o.csrfToken)}
        <button type="submit" class="danger">Yes, disconnect ${title}</button>
        <a href="${installationPath(o.view.id)}">Cancel</a>
      </form>`,
  );
}

export function messagePage(o: {
  title: string;
  message: string;
  signedIn: boolean;
  csrfToken?: string | null;
}): SafeHtml {
  return layout(
    { title: o.title, csrfToken: o.csrfToken ?? null, section: 'none', signedIn: o.signedIn },
    html`<h1>${o.title}</h1>
      <p>${o.message}</p>
      <p><a href="/admin">Back to the installations</a></p>`,
  );
}
