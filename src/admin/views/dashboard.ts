import { providers } from '../../providers.js';
import { html, joinHtml, type SafeHtml } from '../html.js';
import type { InstallationView } from '../overview.js';
import {
  installationPath,
  installationTitle,
  num,
  RUN_KIND_LABELS,
  RUN_STATE_LABELS,
  when,
} from './format.js';
import { layout, notice, problem } from './layout.js';
import { connectionBadge, connectionDetails, coverageChart, keyDetails } from './parts.js';

/** `/admin`: every installation at a glance, each with a link to its own page. */

/** A page of this server beside the admin's own (the demo's component previews). */
export interface AdminLink {
  href: string;
  label: string;
}

export function dashboardPage(o: {
  views: readonly InstallationView[];
  csrfToken: string | null;
  notice?: string | null;
  /** Queues no worker is attached to, as the metrics loop last saw them: nothing is processed there. */
  queuesWithoutWorkers?: readonly string[];
  links?: readonly AdminLink[];
}): SafeHtml {
  const cards = o.views.map((v) => {
    const title = installationTitle(v);
    const run = v.lastRun;
    return html`<section class="card" aria-labelledby="inst-${v.id}">
      <h2 id="inst-${v.id}"><a href="${installationPath(v.id)}">${title}</a> ${connectionBadge(v)}</h2>
      <div class="grid-2">
        <div>
          ${connectionDetails(v)}
          ${keyDetails(v)}
          <p>Review queue: <a href="${installationPath(v.id, '#review')}">${num(v.reviewCount)} compan${v.reviewCount === 1 ? 'y waits' : 'ies wait'} for a decision</a>.</p>
          <p>Last sync: ${run ? `${RUN_KIND_LABELS[run.kind]}, ${RUN_STATE_LABELS[run.state].toLowerCase()}, started ${when(run.startedAt)}` : 'none yet'}.</p>
          <p><a class="button" href="${installationPath(v.id)}">Manage ${title}</a></p>
        </div>
        <div>${coverageChart(v)}</div>
      </div>
    </section>`;
  });
  return layout(
    { title: 'Installations', csrfToken: o.csrfToken, section: 'installations', signedIn: true },
    html`<h1>Installations</h1>
      ${notice(o.notice)}
      ${problem(
        o.queuesWithoutWorkers?.length
          ? `No worker is attached to the ${o.queuesWithoutWorkers.join(', ')} queue${o.queuesWithoutWorkers.length === 1 ? '' : 's'}: syncs and report updates wait there until a worker runs (report-connector worker or start). Webhooks are still accepted and queued.`
          : null,
      )}
      ${
        o.views.length === 0
          ? html`<p>Nothing is installed yet. Install the app from
              ${joinHtml(
                providers.map((p) => html`<a href="${p.installPath}">${p.label}</a>`),
                html` or `,
              )},
              or set an access token in the configuration.</p>`
          : cards
      }
      ${
        o.links?.length
          ? html`<p class="admin-links">Also here: ${joinHtml(
              o.links.map((l) => html`<a href="${l.href}">${l.label}</a>`),
              html`, `,
            )}.</p>`
          : ''
      }`,
  );
}
