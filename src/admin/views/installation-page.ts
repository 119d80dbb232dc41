import type { RunSummary } from '../../storage/runs.js';
import { html, type SafeHtml } from '../html.js';
import type { InstallationView } from '../overview.js';
import { installationPath, num } from './format.js';
import { installationShell, tabPath } from './installation-tabs.js';
import { csrfField } from './layout.js';
import {
  changeSourceDetails,
  connectionDetails,
  coverageChart,
  keyDetails,
  rateDetails,
  runsTable,
  scoreChart,
} from './parts.js';
import { previewSection } from './preview.js';

/**
 * `/admin/installations/:id`: the installation's overview (connection, key, preview, matching, sync history)
 * with a line per other page saying what waits there. Review, links, requests and alerts, and settings are
 * pages of their own (review-page.ts, links-page.ts, requests-page.ts, settings-page.ts).
 */

/** The forms a refusal can be shown beside. */
export type PageForm =
  | 'key'
  | 'review'
  | 'sync'
  | 'request'
  | 'alerts'
  | 'links'
  | 'undo'
  | 'preview'
  | 'fixtures';

export interface InstallationPageInput {
  view: InstallationView;
  runs: readonly RunSummary[];
  /** The latest preview run, or null when none was made. */
  preview?: RunSummary | null;
  /** When the installation last changed (a write or a decision); a preview older than it is stale. */
  lastChange?: string | null;
  csrfToken: string | null;
  notice?: string | null;
  /** A failed form: which one and why (shown at the top and beside the form). */
  error?: { form: PageForm; message: string } | null;
}

export function installationPage(o: InstallationPageInput): SafeHtml {
  const { view: v } = o;
  const runsUrl = `/admin/api/installations/${encodeURIComponent(v.id)}/runs`;
  const c = v.coverage.counts;

  return installationShell(
    {
      view: v,
      tab: 'overview',
      csrfToken: o.csrfToken,
      notice: o.notice,
      error: o.error?.message,
      lead: fixtureRefusal(v, o.csrfToken, o.error?.form === 'fixtures' ? o.error.message : null),
    },
    html`<section class="card" aria-labelledby="waiting">
        <h2 id="waiting">What waits</h2>
        <ul class="plain-list waiting-list">
          <li><a href="${tabPath(v.id, 'review')}">${num(v.reviewCount)} waiting for review</a>: pick the right report or reject the candidates.</li>
          <li><a href="${tabPath(v.id, 'links')}">${num(c.matched)} linked records</a>: unlink, match again, undo a sync, the decision log${c.not_published > 0 ? html`; <a href="${tabPath(v.id, 'links', '#not-published')}">${num(c.not_published)} whose report is not published</a>` : ''}.</li>
          <li><a href="${tabPath(v.id, 'requests')}">${num(c.no_match)} without a report, ${num(c.requested)} requested</a>: request a report; alerts.</li>
          ${
            v.storm.reports > 0
              ? html`<li data-storm>${num(v.storm.reports)} ${v.storm.reports === 1 ? 'report changes' : 'reports change'} again and again (a storm): ${v.storm.reports === 1 ? 'its' : 'their'} score changes are gathered and written to the records at most once every ${num(v.storm.coalesceSeconds)} s.</li>`
              : ''
          }
          <li><a href="${tabPath(v.id, 'settings')}">Settings</a>: the report-service key, fixture writes, disconnecting.</li>
        </ul>
      </section>

      <div class="grid-2">
        <section class="card" aria-labelledby="connection">
          <h2 id="connection">Connection</h2>
          ${connectionDetails(v)}
          ${changeSourceDetails(v)}
        </section>
        <section class="card" aria-labelledby="key">
          <h2 id="key">Report-service key</h2>
          ${keyDetails(v)}
          ${rateDetails(v)}
          <p><a href="${tabPath(v.id, 'settings', '#key-form')}">Change the key</a></p>
        </section>
      </div>

      ${previewSection({ view: v, preview: o.preview ?? null, lastChange: o.lastChange ?? null, csrf: o.csrfToken, error: o.error?.form === 'preview' ? o.error.message : null })}

      <section class="card" aria-labelledby="coverage">
        <h2 id="coverage">Matching</h2>
        <p>${num(v.coverage.total)} records processed; ${num(v.scores.count)} linked records have a score.</p>
        <div class="grid-2">
          <div>${coverageChart(v)}</div>
          <div>${scoreChart(v)}</div>
        </div>
        ${sharedLinks(v)}
      </section>

      <section class="card" aria-labelledby="runs">
        <h2 id="runs">Sync history</h2>
        ${
          v.connection.state === 'pending'
            ? html`<p>No sync runs until the installation is approved (above).</p>`
            : html`<form method="post" action="${installationPath(v.id, '/sync')}" class="sync-form">
          ${csrfField(o.csrfToken)}
          <span class="check">
            <input type="checkbox" id="sync-full" name="full" value="true">
            <label for="sync-full">Full sync: also re-match records left without a match or waiting for review</label>
          </span>
          <button type="submit">Sync now</button>
        </form>`
        }
        ${runsTable(o.runs, runsUrl)}
      </section>`,
  );
}

/**
 * A sandbox key on a production CRM: writes are refused until an operator allows fixture scores for this
 * installation (or enters a real key).
 */
function fixtureRefusal(
  v: Pick<InstallationView, 'id' | 'fixtureRefusal'>,
  csrf: string | null,
  error: string | null,
): SafeHtml | string {
  if (!v.fixtureRefusal) return '';
  return html`<div class="problem" role="alert" id="fixtures">
    <p><strong>Writes refused:</strong> ${v.fixtureRefusal}. Enter a production report-service key below, or
      allow the sandbox key's fixture scores to be written into this CRM.</p>
    ${error ? html`<p>${error}</p>` : ''}
    <form method="post" action="${installationPath(v.id, '/fixture-writes')}" class="inline-form">
      ${csrfField(csrf)}<input type="hidden" name="allow" value="true">
      <button type="submit" class="danger">Allow fixture scores in this CRM</button>
    </form>
  </div>`;
}

/**
 * Reports the connector linked to several records that disagree on domain or country: a person should look.
 * Which records disagree comes from Redis (digests of their places when linked); the domains and countries
 * shown are read from the CRM, and left out, saying why, when it could not be read.
 */
export function sharedLinks(
  v: Pick<InstallationView, 'sharedLinkConflicts' | 'sharedLinkPlacesProblem'>,
): SafeHtml | string {
  if (v.sharedLinkConflicts.length === 0) return '';
  const problem = v.sharedLinkPlacesProblem;
  return html`<h3 id="shared-links">One report, records that disagree</h3>
    <p>The connector linked each of these reports to several records whose domain or country differed when they
      were linked. One of them may be a namesake: check the records and correct the slug in the CRM if so.</p>
    ${problem ? html`<p class="shared-links-problem">Their domains and countries are not shown: ${problem}.</p>` : ''}
    <ul class="shared-links">
      ${v.sharedLinkConflicts.map(
        (
          c,
        ) => html`<li><code>${c.slug}</code> (${c.differs.join(' and ')} ${c.differs.length === 1 ? 'differs' : 'differ'}):
          ${c.records.map((r, i) => html`${i > 0 ? '; ' : ''}record ${r.recordId}${problem ? '' : html` (${r.domain ?? 'no domain'}, ${r.country ?? 'no country'})`}`)}</li>`,
      )}
    </ul>`;
}
