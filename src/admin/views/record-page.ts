import { FIELDS } from '../../fields.js';
import { html, type SafeHtml } from '../html.js';
import type { RecordView } from '../record-view.js';
import { installationPath, MATCH_STATUS_LABELS, time } from './format.js';
import { layout } from './layout.js';

/** One record: what the CRM holds beside what the connector keeps (linked from every list of records). */

export function recordPath(installationId: string, recordId: string): string {
  return installationPath(installationId, `/records/${encodeURIComponent(recordId)}`);
}

/** A record id that opens the record's page, for every list that shows one. */
export function recordLink(installationId: string, recordId: string): SafeHtml {
  return html`<a href="${recordPath(installationId, recordId)}"><code>${recordId}</code></a>`;
}

function text(value: unknown): string {
  if (value === null || value === undefined || value === '') return '—';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function crmSection(v: RecordView): SafeHtml {
  const crm = v.crm;
  if (!crm.read) return html`<p>Not read from the CRM: ${crm.reason}.</p>`;
  if (!crm.found)
    return html`<p>The CRM has no record <code>${v.recordId}</code> (deleted or merged away); what the connector
      kept is below.</p>`;
  // A datetime field reads as a time, its exact value kept in the <time> element.
  const rows = FIELDS.map((f) => {
    const value = crm.fields[f.key];
    const shown =
      f.kind === 'datetime' && typeof value === 'string' && value !== '' ? time(value) : text(value);
    return html`<tr><th scope="row">${f.label}</th><td>${shown}</td></tr>`;
  });
  return html`<table>
      <caption class="visually-hidden">The record's fields in the CRM</caption>
      <tbody>
        <tr><th scope="row">Name</th><td>${text(crm.name)}</td></tr>
        <tr><th scope="row">Domain</th><td>${text(crm.domain)}</td></tr>
        ${rows}
      </tbody>
    </table>`;
}

function connectorSection(v: RecordView): SafeHtml {
  const c = v.connector;
  const candidates = c.review?.candidates.length
    ? html`<ul>${c.review.candidates.map((k) => html`<li><code>${k.slug}</code>${k.name ? html` ${k.name}` : ''}</li>`)}</ul>`
    : html`—`;
  const decisions = c.decisions.length
    ? html`<ul>${c.decisions.map(
        (d) =>
          html`<li>${time(d.at)}: ${d.action}${d.slug ? html` <code>${d.slug}</code>` : ''} by ${d.by.kind}${
            'id' in d.by && d.by.id ? html` ${d.by.id}` : ''
          }</li>`,
      )}</ul>`
    : html`none`;
  return html`<table>
      <caption class="visually-hidden">What the connector keeps about the record</caption>
      <tbody>
        <tr><th scope="row">Status</th><td>${c.status ? MATCH_STATUS_LABELS[c.status] : 'not written yet'}</td></tr>
        <tr><th scope="row">Report</th><td>${c.slug ? html`<code>${c.slug}</code>` : '—'}</td></tr>
        <tr><th scope="row">Linked by the connector</th><td>${c.autoLinkedSlug ? 'yes (a re-match may change it)' : 'no'}</td></tr>
        <tr><th scope="row">Review candidates</th><td>${candidates}</td></tr>
        <tr><th scope="row">Rejected reports</th><td>${c.rejectedSlugs.length ? c.rejectedSlugs.join(', ') : '—'}</td></tr>
        <tr><th scope="row">Report request</th><td>${c.request ? `${c.request.state} (submission ${c.request.submissionId})` : '—'}</td></tr>
        <tr><th scope="row">Decisions</th><td>${decisions}</td></tr>
      </tbody>
    </table>`;
}

export function recordPage(o: { view: RecordView; csrfToken: string | null }): SafeHtml {
  const v = o.view;
  const title = v.crm.read && v.crm.found && v.crm.name ? v.crm.name : `Record ${v.recordId}`;
  return layout(
    { title, csrfToken: o.csrfToken, section: 'installations', signedIn: true },
    html`<p><a href="${installationPath(v.installationId)}">← Installation ${v.installationId}</a></p>
      <h1>${title}</h1>
      <p>Record <code>${v.recordId}</code>. Decisions on it (link, unlink, match again) are taken on the
        installation page's review and corrections sections.</p>
      <div class="grid-2">
        <section class="card" aria-labelledby="in-crm"><h2 id="in-crm">In the CRM</h2>${crmSection(v)}</section>
        <section class="card" aria-labelledby="in-connector"><h2 id="in-connector">In the connector</h2>${connectorSection(v)}</section>
      </div>`,
  );
}
