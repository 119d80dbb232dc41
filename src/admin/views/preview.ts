import type { MatchStatus } from '../../fields.js';
import type { RunSummary } from '../../storage/runs.js';
import { html, type SafeHtml } from '../html.js';
import type { InstallationView } from '../overview.js';
import { installationPath, num, RUN_STATE_LABELS, when } from './format.js';
import { csrfField, problem } from './layout.js';

/**
 * The installation page's preview: what a full write would do (counts per status and a few records of each),
 * matched without writing, and the buttons that start the write. For a pending installation it is the step
 * before approval.
 */

const STATUS_LABELS: Record<MatchStatus, string> = {
  matched: 'Linked',
  needs_review: 'Review',
  no_match: 'No match',
  not_published: 'Not published',
  requested: 'Requested',
  error: 'Error',
};

export function previewSection(o: {
  view: Pick<InstallationView, 'id'> & { connection: { state: string } };
  preview: RunSummary | null;
  /** When the installation last changed (a record's state or a decision); null when not known. */
  lastChange?: string | null;
  csrf: string | null;
  error: string | null;
}): SafeHtml {
  const { view: v, preview: p } = o;
  const pending = v.connection.state === 'pending';
  const running = p !== null && (p.state === 'listing' || p.state === 'processing');
  const stale = p !== null && !running && isStale(p, o.lastChange ?? null);
  const startForm = html`<form method="post" action="${installationPath(v.id, '/preview')}" class="inline-form">
    ${csrfField(o.csrf)}
    <button type="submit" class="${p ? 'secondary' : ''}">${p ? 'Preview again' : 'Preview a full sync'}</button>
  </form>`;
  const writeForm =
    p?.state !== 'done'
      ? ''
      : pending
        ? html`<form method="post" action="${installationPath(v.id, '/approve')}" class="inline-form">
            ${csrfField(o.csrf)}<button type="submit">Approve and write</button></form>`
        : html`<form method="post" action="${installationPath(v.id, '/sync')}" class="inline-form">
            ${csrfField(o.csrf)}<input type="hidden" name="full" value="true">
            <button type="submit">Start the write (full sync)</button></form>`;
  // While it runs, the page's script fetches the page again every few seconds and puts this section in place
  // (assets.ts, PREVIEW_SCRIPT): no reload, nothing inline for the content security policy to refuse.
  return html`<section class="card" aria-labelledby="preview" data-preview-section${running ? html` data-preview-refresh="3"` : ''}>
    <h2 id="preview">Preview${stale ? html` <span class="badge badge-stale" data-preview-stale>out of date</span>` : ''}</h2>
    <p>Matches every record as a full sync would and writes nothing to the CRM, then shows what the write would
      do.${pending ? ' The installation waits for approval: preview it, then approve it to write.' : ''}</p>
    ${problem(o.error)}
    ${p === null ? html`<p>No preview yet.</p>` : previewResult(p, running)}
    ${running ? html`<p class="hint" role="status">Running: this part of the page refreshes itself every few seconds.</p>` : ''}
    ${stale ? html`<p class="problem" role="status">This preview is older than the installation's last change (${when(o.lastChange)}): records were written or decided since it ran. Preview again to see what a write would do now.</p>` : ''}
    <p class="button-row">${startForm}${writeForm}</p>
  </section>`;
}

function previewResult(p: RunSummary, running: boolean): SafeHtml {
  const t = p.totals;
  const shown = (Object.keys(STATUS_LABELS) as MatchStatus[]).filter(
    (s) =>
      t.statuses[s] > 0 ||
      s === 'matched' ||
      s === 'needs_review' ||
      s === 'no_match' ||
      s === 'not_published',
  );
  return html`<p data-preview-state="${p.state}">${RUN_STATE_LABELS[p.state]}, started ${when(p.startedAt)}:
      ${num(t.records)} of ${num(p.recordsListed)} records matched${running ? ' so far' : ''};
      a write would change <strong data-preview-field="wouldWrite">${num(t.wouldWrite)}</strong>, leave
      ${num(t.unchanged)} unchanged${t.failed > 0 ? html`, and fail on ${num(t.failed)}` : ''}.
      ${p.stoppedReason ? html`Stopped: ${p.stoppedReason}.` : ''}</p>
    <table class="preview-counts">
      <caption class="visually-hidden">Records per status after the write</caption>
      <thead><tr>${shown.map((s) => html`<th scope="col">${STATUS_LABELS[s]}</th>`)}</tr></thead>
      <tbody><tr>${shown.map((s) => html`<td class="num" data-preview-status="${s}">${num(t.statuses[s])}</td>`)}</tr></tbody>
    </table>
    ${
      p.samples.length === 0
        ? ''
        : html`<details><summary>Sample records</summary>
      <table class="preview-samples">
        <thead><tr><th scope="col">Record</th><th scope="col">Name</th><th scope="col">Would be</th><th scope="col">Report</th></tr></thead>
        <tbody>${p.samples.map(
          (
            s,
          ) => html`<tr><td>${s.recordId}</td><td>${s.name ?? '(no name)'}</td><td>${STATUS_LABELS[s.status]}</td>
            <td>${s.slug ? html`<code>${s.slug}</code>` : s.candidates.length > 0 ? html`candidates: ${s.candidates.map((c, i) => html`${i > 0 ? ', ' : ''}<code>${c}</code>`)}` : ''}</td></tr>`,
        )}</tbody>
      </table></details>`
    }`;
}

/** A finished preview started before the installation's last change no longer says what a write would do. */
export function isStale(p: RunSummary, lastChange: string | null): boolean {
  if (!lastChange) return false;
  const change = Date.parse(lastChange);
  const started = Date.parse(p.startedAt);
  return Number.isFinite(change) && Number.isFinite(started) && change > started;
}
