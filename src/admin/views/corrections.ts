import type { Decision, DecisionActor } from '../../decisions/decision-log.js';
import type { RunSummary } from '../../storage/runs.js';
import { html, type SafeHtml } from '../html.js';
import type { InstallationView } from '../overview.js';
import { doneNotice, focusId, type PlacedNotice, returnFields } from './after-action.js';
import { installationPath, num, RUN_KIND_LABELS, time, when } from './format.js';
import { csrfField, problem } from './layout.js';
import { recordLink } from './record-page.js';

/**
 * The installation page's sections about correcting links and the record of who decided: review at scale
 * (the bulk form the review items' checkboxes belong to), unlink and re-match, undoing a run, and the decision
 * log with its CSV downloads.
 */

export interface LinkedItem {
  recordId: string;
  /** The CRM's name when it could be read. */
  name: string | null;
  slug: string | null;
}

/** The path segment of the look-up forms, whose record id is a form field instead (`/records/by-id/unlink`). */
export const FORM_RECORD = 'by-id';

export const BULK_FORM_ID = 'review-bulk';

const apiPath = (id: string, suffix: string) => `/admin/api/installations/${encodeURIComponent(id)}${suffix}`;

/**
 * The bulk form: its checkboxes sit in each review item (HTML's `form` attribute ties them to it, since the
 * items hold forms of their own). "Select all" is a checkbox the page's script shows and drives; without
 * the script each box is checked by hand.
 */
export function bulkReviewForm(
  v: Pick<InstallationView, 'id'>,
  shown: number,
  csrf: string | null,
  paging: { page: number; per: number } = { page: 1, per: 10 },
  /** The page's list place (its search): the bulk action's redirect and confirmation keep it. */
  back = '',
): SafeHtml {
  return html`<form id="${BULK_FORM_ID}" method="post" action="${installationPath(v.id, '/review/bulk')}" class="bulk-form">
    ${csrfField(csrf)}
    <input type="hidden" name="page" value="${paging.page}"><input type="hidden" name="per" value="${paging.per}">${back ? html`<input type="hidden" name="return" value="${back}">` : ''}
    <span class="check" data-select-all-box hidden>
      <input type="checkbox" id="review-select-all" data-select-all="${BULK_FORM_ID}">
      <label for="review-select-all">Select all ${num(shown)} on this page</label>
    </span>
    <span class="hint" data-selected-count="${BULK_FORM_ID}" aria-live="polite">None selected.</span>
    <span class="button-row">
      <button type="submit" name="action" value="accept-first">Accept the first candidate of each selected</button>
      <button type="submit" name="action" value="reject" class="secondary">Reject every candidate of each selected</button>
    </span>
  </form>`;
}

/** One review item's checkbox, tied to the bulk form. */
export function selectBox(recordId: string, who: string): SafeHtml {
  const id = `select-${recordId}`;
  return html`<span class="check select-box">
    <input type="checkbox" id="${id}" name="recordIds" value="${recordId}" form="${BULK_FORM_ID}">
    <label for="${id}">Select<span class="visually-hidden"> ${who}</span></label>
  </span>`;
}

/** The page-size links keep the search (a new size starts again at its first page). */
export function reviewPageSizes(
  v: Pick<InstallationView, 'id'>,
  sizes: readonly number[],
  current: number,
  search = '',
): SafeHtml {
  const href = (n: number) => {
    const q = new URLSearchParams({ per: String(n) });
    if (search !== '') q.set('q', search);
    return installationPath(v.id, `/review?${q.toString()}#review`);
  };
  return html`<p class="hint">Items per page:
    ${sizes.map((n, i) => html`${i > 0 ? ' · ' : ''}${n === current ? html`<strong aria-current="true">${n}</strong>` : html`<a href="${href(n)}">${n}</a>`}`)}
    · Download the whole queue as <a href="${apiPath(v.id, '/review.csv')}" download>CSV</a>.</p>`;
}

function recordForm(
  v: Pick<InstallationView, 'id'>,
  recordId: string,
  action: 'unlink' | 'rematch',
  label: string,
  who: string,
  csrf: string | null,
  back?: { query: string; next: string | null },
): SafeHtml {
  return html`<form method="post" action="${installationPath(v.id, `/records/${encodeURIComponent(recordId)}/${action}`)}" class="inline-form">
    ${csrfField(csrf)}${returnFields(back)}
    <button type="submit" class="secondary"${back ? html` id="${focusId(recordId)}"` : ''}>${label}<span class="visually-hidden"> ${who}</span></button>
  </form>`;
}

/** "Match again" for a record left without a report: lifts a person's or admin's no_match. */
export function rematchForm(
  v: Pick<InstallationView, 'id'>,
  recordId: string,
  who: string,
  csrf: string | null,
): SafeHtml {
  return recordForm(v, recordId, 'rematch', 'Match again', who, csrf);
}

const UNDOABLE: readonly RunSummary['kind'][] = ['initial', 'full', 'incremental'];

export interface CorrectionsInput {
  view: Pick<InstallationView, 'id'>;
  linked: readonly LinkedItem[];
  linkedTotal: number;
  /** The linked list's search and pager (links-page.ts). */
  linkedNav?: SafeHtml;
  runs: readonly RunSummary[];
  csrf: string | null;
  error: string | null;
  /** The page's list place, sent back with each row's unlink (after-action.ts). */
  back?: string;
  /** What the last change did: placed before the row that took the unlinked one's place, else on top. */
  placed?: PlacedNotice | null;
  notice?: string | null;
}

/** The linked records' rows, the last change's notice before the row that took the unlinked one's place. */
function linkedRows(o: CorrectionsInput, placedAt: string | null): SafeHtml[] {
  const { view: v, csrf } = o;
  return o.linked.map((item, i) => {
    const company = item.name ?? `Record ${item.recordId}`;
    const who = `${company}, record ${item.recordId}`;
    const next = (o.linked[i + 1] ?? o.linked[i - 1])?.recordId ?? null;
    const back = o.back === undefined ? undefined : { query: o.back, next };
    const before =
      placedAt === item.recordId
        ? html`<tr class="done-row"><td colspan="3">${doneNotice(o.placed!.message, focusId(item.recordId))}</td></tr>`
        : '';
    return html`${before}<tr>
      <th scope="row" data-label="Company">${company}<br>${recordLink(v.id, item.recordId)}</th>
      <td data-label="Report"><code>${item.slug ?? '—'}</code></td>
      <td>${recordForm(v, item.recordId, 'unlink', 'Unlink', who, csrf, back)}</td>
    </tr>`;
  });
}

/** The finished syncs whose own links can be taken back, each with its undo form. */
function undoRunRows(o: CorrectionsInput): { count: number; rows: SafeHtml[] } {
  const { view: v, csrf } = o;
  const runs = o.runs.filter(
    (r) => UNDOABLE.includes(r.kind) && (r.state === 'done' || r.state === 'stopped'),
  );
  const rows = runs.map(
    (run) => html`<li>
      <form method="post" action="${installationPath(v.id, `/runs/${encodeURIComponent(run.id)}/undo`)}" class="inline-form">
        ${csrfField(csrf)}
        ${RUN_KIND_LABELS[run.kind]}, ${when(run.startedAt)} (${num(run.totals.written)} written)
        <button type="submit" class="secondary">Undo its links<span class="visually-hidden"> of the ${RUN_KIND_LABELS[run.kind]} started ${when(run.startedAt)}</span></button>
      </form>
    </li>`,
  );
  return { count: runs.length, rows };
}

/** A look-up form: unlink or match again a record named by its id. */
function lookupForm(
  o: CorrectionsInput,
  action: 'unlink' | 'rematch',
  label: string,
  hint: string,
): SafeHtml {
  const fieldId = `${action}-record-id`;
  return html`<form method="post" action="${installationPath(o.view.id, `/records/${FORM_RECORD}/${action}`)}" class="slug-form">
      ${csrfField(o.csrf)}${returnFields(o.back === undefined ? undefined : { query: o.back, next: null })}
      <label for="${fieldId}">${label}</label>
      <span class="slug-row">
        <input id="${fieldId}" name="recordId" type="text" required spellcheck="false" autocomplete="off" aria-describedby="${fieldId}-hint">
        <button type="submit" class="secondary">${action === 'unlink' ? 'Unlink' : 'Match again'}</button>
      </span>
      <p class="hint" id="${fieldId}-hint">${hint}</p>
    </form>`;
}

export function correctionsSection(o: CorrectionsInput): SafeHtml {
  const placedAt =
    o.placed?.next && o.linked.some((i) => i.recordId === o.placed?.next) ? o.placed.next : null;
  const message = o.placed?.message ?? o.notice ?? null;
  const topNotice = message && !placedAt ? doneNotice(message, null) : '';
  const runs = undoRunRows(o);
  return html`<section class="card" aria-labelledby="corrections">
    <h2 id="corrections">Corrections</h2>
    ${topNotice}
    ${problem(o.error, 'corrections-error')}
    <p>A wrong link is fixed once: unlinking makes the record <code>no_match</code> by your decision, written as
      <code>report_link_source</code> = <code>admin</code> on the record, and matching never links it again until a
      person sets a slug or you ask for a re-match.</p>
    <div class="review-actions">
      ${lookupForm(o, 'unlink', 'Unlink a record by its id', 'The record keeps no report; every report field is emptied.')}
      ${lookupForm(o, 'rematch', 'Match a record again by its id', 'Lifts a person’s or an admin’s “no match” and matches the record now.')}
    </div>
    <h3 id="linked-records">Linked records (${num(o.linkedTotal)})</h3>
    ${o.linkedNav ?? ''}
    ${
      o.linked.length === 0
        ? html`<p>${o.linkedTotal === 0 ? 'No record is linked to a report yet.' : 'No linked record here.'}</p>`
        : html`<table class="responsive">
            <caption class="visually-hidden">Records linked to a report</caption>
            <thead><tr><th scope="col">Company</th><th scope="col">Report</th><th scope="col">Correction</th></tr></thead>
            <tbody>${linkedRows(o, placedAt)}</tbody>
          </table>
          ${!o.linkedNav && o.linkedTotal > o.linked.length ? html`<p class="hint">Showing ${num(o.linked.length)} of ${num(o.linkedTotal)}; unlink any other by its id above.</p>` : ''}`
    }
    <h3 id="undo-runs">Undo a sync</h3>
    <p>Takes back the links a sync made by itself; records a person or an admin changed since keep theirs.</p>
    ${runs.count === 0 ? html`<p>No finished sync to undo.</p>` : html`<ul class="plain-list">${runs.rows}</ul>`}
  </section>`;
}

export const ACTION_LABELS: Record<Decision['action'], string> = {
  accept: 'Accepted a candidate',
  reject: 'Rejected the candidates',
  set: 'Set a slug',
  clear: 'Cleared the slug',
  unlink: 'Unlinked',
  undo: 'Undid a sync’s link',
  rematch: 'Asked for a re-match',
  request: 'Requested a report',
  restore: 'Undid a mass action',
};

export function actorLabel(by: DecisionActor): string {
  if (by.name && by.kind === 'admin-session') return `${by.name} (session ${by.id ?? '?'})`;
  if (by.name && by.kind === 'admin-token') return `${by.name} (API token)`;
  switch (by.kind) {
    case 'admin-session':
      return `Admin (session ${by.id ?? '?'})`;
    case 'admin-token':
      return 'Admin (API token)';
    case 'crm-user':
      return `CRM user ${by.id ?? ''}`.trim();
    case 'crm':
      return 'Someone in the CRM';
  }
}

/** What the decision log and the mass actions know of the records and runs they name, in words. */
export interface LogWords {
  /** Record id -> its CRM name, where it was read. */
  names?: ReadonlyMap<string, string | null>;
  /** Run id -> the run in words (`runWords`), for the runs still on record. */
  runs?: ReadonlyMap<string, string>;
}

/** A run the log names: its kind and time where known, else its id (the run is no longer kept). */
export function runText(runId: string, words: LogWords | undefined): SafeHtml {
  const known = words?.runs?.get(runId);
  return known ? html`${known}` : html`a sync no longer on record (run <code>${runId}</code>)`;
}

/** A record the log names: its name with the id as the link's secondary text, or the id alone. */
export function namedRecord(installationId: string, recordId: string, words: LogWords | undefined): SafeHtml {
  const name = words?.names?.get(recordId);
  return name
    ? html`${name}<br><span class="hint">record ${recordLink(installationId, recordId)}</span>`
    : recordLink(installationId, recordId);
}

function evidenceText(d: Decision, words?: LogWords): SafeHtml | string {
  const parts: string[] = [];
  const candidates = d.evidence.candidates ?? [];
  if (candidates.length > 0) {
    parts.push(
      candidates
        .map((c) => `${c.slug}${c.score == null ? '' : ` (score ${c.score})`}${c.why ? `: ${c.why}` : ''}`)
        .join('; '),
    );
  }
  if (d.evidence.offered !== undefined) parts.push(`${d.evidence.offered} offered`);
  if (d.evidence.previousSlug) parts.push(`was ${d.evidence.previousSlug}`);
  const run = d.evidence.runId ? runText(d.evidence.runId, words) : null;
  if (parts.length === 0 && !run) return '—';
  return html`${parts.join(' · ')}${run ? html`${parts.length > 0 ? ' · ' : ''}${run}` : ''}`;
}

export function decisionLogSection(o: {
  view: Pick<InstallationView, 'id'>;
  decisions: readonly Decision[];
  total: number;
  limit: number;
  /** Mass actions that can still be undone: their entries carry "Undo this" (it shows the action first). */
  undoable?: ReadonlySet<string>;
  csrf?: string | null;
  /** The log's search and its newer and older pages (links-page.ts). */
  nav?: SafeHtml;
  words?: LogWords;
}): SafeHtml {
  const undo = (d: Decision) => {
    const massId = d.evidence.massId;
    if (!massId || !o.undoable?.has(massId)) return '';
    return html`<form method="post" action="${installationPath(o.view.id, `/mass-actions/${encodeURIComponent(massId)}/undo`)}" class="inline-form">
      ${csrfField(o.csrf)}<button type="submit" class="secondary">Undo this…<span class="visually-hidden"> (the whole bulk action)</span></button>
    </form>`;
  };
  const rows = o.decisions.map(
    (d) => html`<tr>
      <th scope="row" data-label="When">${time(d.at)}</th>
      <td data-label="Decision">${ACTION_LABELS[d.action]}${d.bulk ? html` <span class="hint">(bulk)</span>` : ''}</td>
      <td data-label="Record">${namedRecord(o.view.id, d.recordId, o.words)}</td>
      <td data-label="Report"><code>${d.slug ?? '—'}</code></td>
      <td data-label="By">${actorLabel(d.by)}</td>
      <td data-label="Evidence">${evidenceText(d, o.words)}${undo(d)}</td>
    </tr>`,
  );
  return html`<section class="card" aria-labelledby="decisions">
    <h2 id="decisions">Decision log (${num(o.total)})</h2>
    <p>Who decided what about a link, when, and on what evidence: review decisions (one by one or in bulk),
      unlinks, undos, re-matches, and slugs set or cleared by people in the CRM. The newest
      ${num(o.limit)} are kept per installation. Download <a href="${apiPath(o.view.id, '/decisions.csv')}" download>the decision log as CSV</a>.</p>
    ${o.nav ?? ''}
    ${
      o.decisions.length === 0
        ? html`<p>No decision has been made yet.</p>`
        : html`<table class="responsive">
            <caption class="visually-hidden">The latest decisions, newest first</caption>
            <thead><tr><th scope="col">When</th><th scope="col">Decision</th><th scope="col">Record</th>
              <th scope="col">Report</th><th scope="col">By</th><th scope="col">Evidence</th></tr></thead>
            <tbody>${rows}</tbody>
          </table>`
    }
  </section>`;
}
