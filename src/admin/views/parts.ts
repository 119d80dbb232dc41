import { perMinute } from '../../app/rate-words.js';
import { MATCH_STATUSES } from '../../fields.js';
import { providerFor } from '../../providers.js';
import type { ReviewItem } from '../../storage/review-codec.js';
import { topTied } from '../../storage/review-ties.js';
import type { RunSummary } from '../../storage/runs.js';
import { html, type SafeHtml } from '../html.js';
import type { InstallationView } from '../overview.js';
import { focusId, returnFields } from './after-action.js';
import { type Bar, barChart } from './charts.js';
import { selectBox } from './corrections.js';
import {
  APPROVAL_LABELS,
  CONNECTION_LABELS,
  installationPath,
  isActive,
  MATCH_STATUS_LABELS,
  num,
  percent,
  RUN_KIND_LABELS,
  RUN_STATE_LABELS,
  time,
  when,
} from './format.js';
import { csrfField } from './layout.js';
import { recordLink } from './record-page.js';
import { requestForm } from './requests.js';

/** Pieces of the installation pages, each one section a person can read on its own. */

export function connectionBadge(v: InstallationView): SafeHtml {
  return html`<span class="badge badge-${v.connection.state}">${CONNECTION_LABELS[v.connection.state]}</span>`;
}

export function sandboxBadge(v: InstallationView): SafeHtml {
  return v.reportKey.sandbox ? html`<span class="badge badge-sandbox">Sandbox: fixture data</span>` : html``;
}

export function connectionDetails(v: InstallationView): SafeHtml {
  const c = v.connection;
  const state =
    c.state === 'pending'
      ? html`<p><strong>Waiting for approval.</strong> Installed by ${v.installedBy ?? 'an unknown user'} in
          ${providerFor(v.crm).label} ${providerFor(v.crm).accountNoun} ${v.accountName ? html`${v.accountName} (${v.externalId})` : v.externalId}
          on ${time(v.createdAt)}. Nothing runs for it until it is approved: no sync, no report read, no CRM call. A preview (below)
          shows what its first write would do, and writes nothing.</p>
          ${
            v.approveCsrf === undefined
              ? ''
              : html`<form method="post" action="${installationPath(v.id, '/approve')}">
            ${v.approveCsrf ? html`<input type="hidden" name="_csrf" value="${v.approveCsrf}">` : ''}
            <button type="submit">Approve and start the first sync</button></form>`
          }`
      : c.state === 'connected'
        ? html`<p>Connected. Changes in the CRM and from the report service are being processed.</p>`
        : c.state === 'disconnected'
          ? html`<p><strong>Disconnected</strong>${c.reason ? html`: ${c.reason}` : ''}. Nothing is processed until it is reconnected.</p>
            ${c.reconnectUrl ? html`<p><a class="button" href="${c.reconnectUrl}">Reconnect ${providerFor(v.crm).label}</a></p>` : ''}
            ${c.reconnectHint ? html`<p>${c.reconnectHint}</p>` : ''}`
          : html`<p><strong>Stopped: the report service refused the key</strong>${c.reason ? html` (${c.reason})` : ''}. Enter a working key below; a full sync then starts by itself.</p>`;
  const letIn = v.approval
    ? html`<p class="muted">Let in ${APPROVAL_LABELS[v.approval.by]}${v.approval.at ? html` on ${time(v.approval.at)}` : ''}.</p>`
    : html``;
  const usage = v.apiUsage
    ? html`<p>CRM API usage: ${v.apiUsage.summary}${
        v.apiUsage.used !== undefined && v.apiUsage.limit
          ? html` <meter min="0" max="${v.apiUsage.limit}" value="${v.apiUsage.used}" aria-label="CRM API calls used">${percent(v.apiUsage.used, v.apiUsage.limit)}</meter>`
          : ''
      }${v.apiUsage.at ? html` <span class="hint">(as the CRM said on ${time(v.apiUsage.at)})</span>` : ''}</p>`
    : html`<p>CRM API usage: no reading yet. The CRM states it in its answers, and none came in the last 3 days; it shows after the connector’s next call (a sync or an update).</p>`;
  return html`${state}${letIn}${usage}`;
}

const CHANGE_SOURCE_LABELS: Record<InstallationView['changeSource']['mode'], string> = {
  webhooks: 'pushed by the CRM',
  stream: 'streaming',
  poll: 'polled',
};

/** Where the CRM's changes come from now, and why (app/change-source.ts decides it). */
export function changeSourceDetails(v: InstallationView): SafeHtml {
  const c = v.changeSource;
  return html`<p id="change-source" data-mode="${c.mode}" data-reason="${c.reason}"><strong>CRM changes:
    ${CHANGE_SOURCE_LABELS[c.mode]}.</strong> ${c.detail}${c.since ? html` <span class="hint">(since ${time(c.since)})</span>` : ''}</p>`;
}

export function keyDetails(v: InstallationView): SafeHtml {
  const k = v.reportKey;
  const source =
    k.source === 'installation'
      ? html`This installation uses its own key, checked ${time(k.checkedAt)}.`
      : k.source === 'environment'
        ? html`This installation uses the server's key (<code>REPORTS_API_KEY</code>)${k.checkedAt ? html`, checked ${time(k.checkedAt)}` : ''}.`
        : html`There is no key: enter one below, or the connector cannot read any report.`;
  return html`<p>${source} ${sandboxBadge(v)}</p>
    ${k.sandbox ? html`<p class="hint">A sandbox key reads the service's fixture data, not real reports.</p>` : ''}
    ${k.problem ? html`<p class="problem-text"><strong>Problem:</strong> ${k.problem}</p>` : ''}`;
}

/**
 * The key's rate as its gate keeps it in Redis: what the connector allows itself now, how it moves (rising
 * while no 429 came, recovering to or probing past the limit a 429 showed, or as the service's headers state),
 * the ceiling when one is set, and the last cut.
 */
export function rateDetails(v: InstallationView): SafeHtml {
  const r = v.reportRate;
  if (!r) return html``;
  const ceiling =
    r.ceilingPerMinute === null
      ? html`no ceiling (<code>REPORTS_RATE_PER_MINUTE</code> not set)`
      : html`ceiling ${perMinute(r.ceilingPerMinute)} (<code>REPORTS_RATE_PER_MINUTE</code>)`;
  if (!r.learnt) {
    return html`<p id="report-rate">Rate: <strong>${perMinute(r.perMinute)} requests a minute</strong> to start with, ${ceiling}: nothing learnt yet, the key was not used lately.</p>`;
  }
  const why = r.statedQuota
    ? html`as the service's rate-limit headers state (${perMinute(r.statedQuota.perMinute)} a minute)`
    : r.phase === 'rising'
      ? html`learnt from the service's answers, rising while no 429 comes`
      : html`learnt from the service's answers, ${r.phase === 'recovering' ? 'recovering towards' : 'probing past'} the key's limit of ${perMinute(r.limitPerMinute ?? r.perMinute)} a minute as its last 429 showed it`;
  const sent = r.sentPerMinute === null ? '' : html`Sent lately: ${perMinute(r.sentPerMinute)} a minute. `;
  return html`<p id="report-rate">Rate: <strong>${perMinute(r.perMinute)} requests a minute</strong> now, ${why}; ${ceiling}.</p>
    <p class="hint">${sent}${r.lastCut ? html`Last cut ${when(r.lastCut.at)}: ${r.lastCut.reason}. ` : ''}Learnt since ${when(r.changedAt)}, kept in Redis for every process until ${when(r.keptUntil)} unless the key is used meanwhile. Key <code>${r.keyId}</code>.</p>`;
}

export function keyForm(v: InstallationView, csrf: string | null, error: string | null): SafeHtml {
  return html`<form method="post" action="${installationPath(v.id, '/key')}" class="stack">
    ${csrfField(csrf)}
    <div class="field">
      <label for="api-key">Report-service API key</label>
      <input id="api-key" name="apiKey" type="password" autocomplete="off" spellcheck="false" required
        aria-describedby="api-key-hint${error ? ' api-key-error' : ''}"${error ? html` aria-invalid="true"` : ''}>
      <p class="hint" id="api-key-hint">Checked with the service at once, then stored encrypted. A refused key is not stored.</p>
      ${error ? html`<p class="problem-text" id="api-key-error">${error}</p>` : ''}
    </div>
    <button type="submit">Check and save key</button>
  </form>
  ${
    v.reportKey.source === 'installation' && v.reportKey.serverKey
      ? html`<form method="post" action="${installationPath(v.id, '/key/server')}" class="stack">
          ${csrfField(csrf)}
          <p class="hint">This installation's own key replaced the server's. Going back forgets it (the server's key
            is <code>REPORTS_API_KEY</code>).</p>
          <button type="submit" class="secondary">Use the server's key again</button>
        </form>`
      : ''
  }`;
}

const TONES: Record<(typeof MATCH_STATUSES)[number], string> = {
  matched: 'tone-good',
  needs_review: 'tone-warn',
  no_match: 'tone-neutral',
  not_published: 'tone-muted',
  requested: 'tone-score',
  error: 'tone-bad',
};

export function coverageChart(v: InstallationView): SafeHtml {
  const bars: Bar[] = MATCH_STATUSES.map((s) => ({
    label: MATCH_STATUS_LABELS[s],
    value: v.coverage.counts[s],
    tone: TONES[s],
  }));
  return barChart({
    id: `coverage-${v.id}`,
    title: 'Match coverage',
    bars,
    total: v.coverage.total,
    emptyText: 'No records have been processed yet.',
  });
}

export function scoreChart(v: InstallationView): SafeHtml {
  const bars: Bar[] = v.scores.buckets.map((b) => ({
    label: `${num(b.from)}–${num(b.to)}`,
    value: b.count,
    tone: 'tone-score',
  }));
  return barChart({
    id: `scores-${v.id}`,
    title: 'Score distribution of linked records',
    bars,
    emptyText: 'No linked record has a score yet.',
  });
}

export function runProgress(run: RunSummary): SafeHtml {
  if (run.batchesTotal === null) {
    return html`<progress data-field="progress" aria-label="Progress of this run"></progress>
      <span data-field="progress-text">${num(run.recordsListed)} records listed so far</span>`;
  }
  const total = Math.max(run.batchesTotal, 1);
  const done = Math.min(run.batchesDone, total);
  return html`<progress data-field="progress" max="${total}" value="${run.batchesTotal === 0 ? 1 : done}" aria-label="Progress of this run"></progress>
    <span data-field="progress-text">${num(run.batchesDone)} of ${num(run.batchesTotal)} batches (${percent(run.batchesTotal === 0 ? 1 : done, total)})</span>`;
}

export function runsTable(runs: readonly RunSummary[], apiUrl: string): SafeHtml {
  if (runs.length === 0) return html`<p>No sync has run yet.</p>`;
  const rows = runs.map((run) => {
    const state =
      run.state === 'stopped' && run.stoppedReason
        ? `${RUN_STATE_LABELS.stopped}: ${run.stoppedReason}`
        : RUN_STATE_LABELS[run.state];
    const errors =
      run.errors.length === 0
        ? html`<span data-field="errors">None</span>`
        : html`<details>
            <summary>${num(run.errors.length)} record error${run.errors.length === 1 ? '' : 's'}</summary>
            <ul class="error-list">
              ${run.errors.map((e) => html`<li><code>${e.recordId}</code> ${e.code}: ${e.message}</li>`)}
            </ul>
          </details>`;
    return html`<tr data-run-id="${run.id}" data-active="${isActive(run) ? 'true' : 'false'}">
      <th scope="row" data-label="Run">${RUN_KIND_LABELS[run.kind]}<br><span class="hint">${time(run.startedAt)}</span></th>
      <td data-label="State" data-field="state">${state}</td>
      <td data-label="Progress">${runProgress(run)}</td>
      <td data-label="Records" data-field="records" class="num">${num(run.totals.records)} of ${num(run.recordsListed)}</td>
      <td data-label="Written" data-field="written" class="num">${num(run.totals.written)}</td>
      <td data-label="Unchanged" data-field="unchanged" class="num">${num(run.totals.unchanged)}</td>
      <td data-label="Failed" data-field="failed" class="num">${num(run.totals.failed)}</td>
      <td data-label="Errors">${errors}</td>
    </tr>`;
  });
  return html`<div data-runs-url="${apiUrl}">
    <table class="responsive">
      <caption class="visually-hidden">Recent sync runs, newest first</caption>
      <thead><tr>
        <th scope="col">Run</th><th scope="col">State</th><th scope="col">Progress</th><th scope="col">Records</th>
        <th scope="col">Written</th><th scope="col">Unchanged</th><th scope="col">Failed</th><th scope="col">Errors</th>
      </tr></thead>
      <tbody>${rows}</tbody>
    </table>
    <p class="hint" data-field="finished" hidden role="status">A run has finished. <a href="">Reload the page</a> to see the new coverage.</p>
  </div>`;
}

export function reviewItemView(
  installationId: string,
  item: ReviewItem,
  csrf: string | null,
  /** The page's list place and the item after this one, sent with each decision (after-action.ts). */
  back?: { query: string; next: string | null },
): SafeHtml {
  const company = item.name ?? `Record ${item.recordId}`;
  const headingId = `review-${item.recordId}`;
  // Several CRM companies may share a name: the record id keeps every button's name unique.
  const who = `${company}, record ${item.recordId}`;
  const action = installationPath(installationId, `/review/${encodeURIComponent(item.recordId)}`);
  const backFields = returnFields(back);
  // The first action takes focus when the item before this one was decided.
  const firstId = (i: number) => (i === 0 ? html` id="${focusId(item.recordId)}"` : '');
  const candidates = item.candidates.map(
    (c, i) => html`<tr>
      <th scope="row" data-label="Report">${c.name}<br><code>${c.slug}</code></th>
      <td data-label="Industry">${c.industry ?? '—'}</td>
      <td data-label="Stage">${c.stage ?? '—'}</td>
      <td data-label="Geography">${c.geography ?? '—'}</td>
      <td data-label="Score" class="num">${c.score ?? '—'}</td>
      <td data-label="Why">${c.why ?? '—'}</td>
      <td>
        <form method="post" action="${action}" class="inline-form">
          ${csrfField(csrf)}
          <input type="hidden" name="action" value="accept">
          <input type="hidden" name="slug" value="${c.slug}">${backFields}
          <button type="submit"${firstId(i)}>Accept<span class="visually-hidden"> ${c.name} (${c.slug}) for ${who}</span></button>
        </form>
      </td>
    </tr>`,
  );
  return html`<article class="review-item" aria-labelledby="${headingId}">
    <div class="review-head">${selectBox(item.recordId, who)}<h3 id="${headingId}">${company}</h3></div>
    <p class="hint">Record ${recordLink(installationId, item.recordId)} · Country: ${item.country ?? '—'} · Industry: ${item.industry ?? '—'} · Queued ${time(item.at)}</p>
    ${topTied(item) ? html`<p class="hint" data-tied>Tied: nothing the record says puts the first candidate ahead of the next, so “Accept the first candidate” leaves it alone. Pick one yourself.</p>` : ''}
    ${
      item.candidates.length > 0
        ? html`<table class="responsive candidates">
            <caption class="visually-hidden">Candidate reports for ${company}</caption>
            <thead><tr>
              <th scope="col">Report</th><th scope="col">Industry</th><th scope="col">Stage</th><th scope="col">Geography</th>
              <th scope="col">Score</th><th scope="col">Why</th><th scope="col">Decision</th>
            </tr></thead>
            <tbody>${candidates}</tbody>
          </table>`
        : html`<p>No candidates are left for this record.</p>`
    }
    <div class="review-actions">
      <form method="post" action="${action}" class="inline-form">
        ${csrfField(csrf)}
        <input type="hidden" name="action" value="reject">${backFields}
        <button type="submit" class="secondary"${item.candidates.length === 0 ? firstId(0) : ''}>Reject all candidates<span class="visually-hidden"> for ${who}</span></button>
      </form>
      <form method="post" action="${action}" class="slug-form">
        ${csrfField(csrf)}
        <input type="hidden" name="action" value="set">${backFields}
        <label for="slug-${item.recordId}">Or link a report by its slug</label>
        <span class="slug-row">
          <input id="slug-${item.recordId}" name="slug" type="text" required spellcheck="false" autocomplete="off">
          <button type="submit" class="secondary">Link<span class="visually-hidden"> ${who} to this slug</span></button>
        </span>
      </form>
      ${requestForm(installationId, item.recordId, who, csrf)}
    </div>
  </article>`;
}
