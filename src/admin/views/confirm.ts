import type { MassActionSummary, MassKind } from '../../decisions/mass-actions.js';
import type { MatchStatus } from '../../fields.js';
import { html, type SafeHtml } from '../html.js';
import type { MassOutcome, MassPreview } from '../mass-actions.js';
import { actorLabel, type LogWords, runText } from './corrections.js';
import { installationPath, num, when } from './format.js';
import { csrfField, layout, notice } from './layout.js';
import { recordLink } from './record-page.js';

/**
 * The confirmation of a mass action (undo a run's links, bulk accept or reject, undo one of those): how many
 * records it changes, the first of them, what it leaves alone, and a form that posts the same request again
 * with the set's digest, so the confirmation applies to this set only. Also the decision log's list of mass
 * actions, each with "Undo this", and the sentence said once one is done.
 */

export const MASS_LABELS: Record<MassKind, string> = {
  'undo-run': 'Undo a sync’s links',
  'accept-first': 'Accept the first candidate of each',
  reject: 'Reject every candidate of each',
  restore: 'Undo of a mass action',
};

const LEFT_ALONE_REASONS: Record<string, string> = {
  touched: 'a person or an admin decided about them since',
  tied: 'nothing the record says puts their first candidate ahead of the next: pick one yourself',
  not_in_review: 'no longer waiting for review',
  no_candidates: 'no candidate to accept',
};

export interface ConfirmPageInput {
  installationId: string;
  installationTitle: string;
  /** What is asked, as a heading: "Undo the links of the full sync of 26 Nov". */
  heading: string;
  preview: MassPreview;
  /** Where the confirmation posts (the same route as the request). */
  action: string;
  /** The request's own fields, sent again with the confirmation. */
  fields: readonly (readonly [string, string])[];
  confirmLabel: string;
  cancelHref: string;
  /** The set changed since the admin last saw it: this is the new one. */
  changed: boolean;
  csrfToken: string | null;
}

const STATUS_WORDS: Record<MatchStatus, string> = {
  matched: 'linked',
  needs_review: 'waiting for review',
  no_match: 'no report (no match)',
  not_published: 'linked, not published',
  requested: 'report requested',
  error: 'error',
};

function change(slug: string | null, status: MatchStatus | null): SafeHtml {
  if (slug) return html`<code>${slug}</code>`;
  return html`<span class="hint">${status ? STATUS_WORDS[status] : 'no report'}</span>`;
}

export function confirmPage(o: ConfirmPageInput): SafeHtml {
  const p = o.preview;
  const left = Object.entries(p.leftAlone).filter(([, n]) => n > 0);
  const rows = p.sample.map(
    (r) => html`<tr>
      <th scope="row" data-label="Record">${r.name ? html`${r.name}<br>` : ''}${recordLink(o.installationId, r.recordId)}</th>
      <td data-label="Now">${change(r.from, r.fromStatus)}</td>
      <td data-label="After">${change(r.to, r.toStatus)}</td>
    </tr>`,
  );
  return layout(
    { title: `Confirm: ${o.heading}`, csrfToken: o.csrfToken, section: 'installations', signedIn: true },
    html`<p class="crumbs"><a href="/admin">Installations</a> / <a href="${installationPath(o.installationId)}">${o.installationTitle}</a> / Confirm</p>
      <h1>${o.heading}</h1>
      ${o.changed ? notice('The set changed since it was shown (records were decided or changed in between): this is the new one. Nothing was done yet.') : ''}
      <section class="card" aria-labelledby="mass-count">
        <h2 id="mass-count" data-mass-count="${p.count}">${p.count === 0 ? 'No record would change' : `${num(p.count)} ${p.count === 1 ? 'record' : 'records'} would change`}</h2>
        ${
          left.length > 0
            ? html`<ul class="plain-list">${left.map(([why, n]) => html`<li data-left-alone="${why}">${num(n)} ${why === 'tied' ? 'tied, left alone' : 'left alone'}: ${LEFT_ALONE_REASONS[why] ?? why}.</li>`)}</ul>`
            : ''
        }
        ${
          rows.length > 0
            ? html`<table class="responsive">
                <caption>${p.count > rows.length ? `The first ${rows.length} of ${num(p.count)}` : 'Every record'}</caption>
                <thead><tr><th scope="col">Record</th><th scope="col">Now</th><th scope="col">After</th></tr></thead>
                <tbody>${rows}</tbody>
              </table>`
            : ''
        }
        <p>It is written to the CRM at once, and kept in the decision log, where “Undo this” takes it back.</p>
        <form method="post" action="${o.action}" class="inline-form" data-confirm-form>
          ${csrfField(o.csrfToken)}
          ${o.fields.map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
          <input type="hidden" name="confirm" value="${p.confirm}">
          ${p.count > 0 ? html`<button type="submit">${o.confirmLabel} (${num(p.count)})</button>` : ''}
          <a class="button secondary" href="${o.cancelHref}">${p.count > 0 ? 'Cancel' : 'Back'}</a>
        </form>
      </section>`,
  );
}

/** The decision log's mass actions, newest first, each with "Undo this" until it is undone. */
export function massActionsSection(o: {
  installationId: string;
  actions: readonly MassActionSummary[];
  csrf: string | null;
  words?: LogWords;
}): SafeHtml | string {
  if (o.actions.length === 0) return '';
  const rows = o.actions.map(
    (m) => html`<tr>
      <th scope="row" data-label="When">${when(m.at)}</th>
      <td data-label="Action">${MASS_LABELS[m.kind]}${m.runId ? html` <span class="hint">(${runText(m.runId, o.words)})</span>` : ''}</td>
      <td data-label="Records">${num(m.done)} changed${m.kept > 0 ? `, ${num(m.kept)} left alone` : ''}</td>
      <td data-label="By">${actorLabel(m.by)}</td>
      <td>${
        m.undoneBy
          ? html`<span class="hint">Undone</span>`
          : html`<form method="post" action="${installationPath(o.installationId, `/mass-actions/${encodeURIComponent(m.id)}/undo`)}" class="inline-form">
              ${csrfField(o.csrf)}
              <button type="submit" class="secondary">Undo this…<span class="visually-hidden"> ${MASS_LABELS[m.kind]} of ${when(m.at)}</span></button>
            </form>`
      }</td>
    </tr>`,
  );
  return html`<section class="card" aria-labelledby="mass-actions">
    <h2 id="mass-actions">Mass actions</h2>
    <p>Undone syncs and bulk decisions, kept 30 days. “Undo this” shows what it would put back first; records a
      person or an admin decided about since are left alone.</p>
    <table class="responsive">
      <caption class="visually-hidden">Mass actions, newest first</caption>
      <thead><tr><th scope="col">When</th><th scope="col">Action</th><th scope="col">Records</th><th scope="col">By</th><th scope="col">Undo</th></tr></thead>
      <tbody>${rows}</tbody>
    </table>
  </section>`;
}

/** The sentence shown once a mass action is done: its own counts (numbers only come from the stored action). */
export function massDoneMessage(outcome: Pick<MassOutcome, 'kind' | 'done' | 'kept'>): string {
  const records = (n: number) => `${num(n)} ${n === 1 ? 'record' : 'records'}`;
  const what: Record<MassKind, string> = {
    'undo-run': `Undone: ${records(outcome.done)} lost the sync’s link (no match, by your decision)`,
    'accept-first': `Accepted: ${records(outcome.done)} linked to their first candidate`,
    reject: `Rejected: ${records(outcome.done)} left without a report, their candidates never offered again`,
    restore: `Undone: ${records(outcome.done)} got back the link they had before`,
  };
  const kept = outcome.kept > 0 ? `; ${records(outcome.kept)} left alone` : '';
  return `${what[outcome.kind]}${kept}. The CRM records were updated; “Undo this” in the decision log takes it back.`;
}
