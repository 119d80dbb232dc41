import type { MatchStatus } from '../../fields.js';
import type { ApprovalSource, InstallationStatus } from '../../installations/store.js';
import { providerFor } from '../../providers.js';
import type { RunSummary } from '../../storage/runs.js';
import { html, type SafeHtml } from '../html.js';
import type { InstallationView } from '../overview.js';

/** Words and number formats the pages share. */

export const MATCH_STATUS_LABELS: Record<MatchStatus, string> = {
  matched: 'Matched',
  needs_review: 'Needs review',
  no_match: 'No match',
  not_published: 'Not published',
  requested: 'Report requested',
  error: 'Error',
};

export const CONNECTION_LABELS: Record<InstallationStatus, string> = {
  pending: 'Waiting for approval',
  connected: 'Connected',
  disconnected: 'Disconnected',
  key_invalid: 'Report key refused',
};

/** Completes "Let in ...". */
export const APPROVAL_LABELS: Record<ApprovalSource, string> = {
  token: 'by the operator (token mode)',
  allowlist: 'by INSTALL_ALLOWLIST',
  admin: 'by an admin',
  own_key: 'by its own report-service key',
  recorded_before: 'before approvals were recorded',
};

export const RUN_KIND_LABELS: Record<RunSummary['kind'], string> = {
  initial: 'First sync',
  full: 'Full sync',
  incremental: 'Sync',
  reconcile: 'Daily re-read',
  preview: 'Preview',
};

/** A run in words: "the full sync of 2026-11-29 09:14 UTC". */
export function runWords(run: Pick<RunSummary, 'kind' | 'startedAt'>): string {
  return `the ${RUN_KIND_LABELS[run.kind].toLowerCase()} of ${when(run.startedAt)}`;
}

export const RUN_STATE_LABELS: Record<RunSummary['state'], string> = {
  listing: 'Listing records',
  processing: 'Processing',
  done: 'Done',
  stopped: 'Stopped',
};

const numbers = new Intl.NumberFormat('en');

export function num(n: number): string {
  return numbers.format(n);
}

export function percent(part: number, whole: number): string {
  if (whole === 0) return '0%';
  const p = (part / whole) * 100;
  return `${p >= 10 || p === 0 ? Math.round(p) : p.toFixed(1)}%`;
}

/** UTC, to the minute: unambiguous wherever the admin sits, and the same as the logs. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/**
 * A time for people where markup may go: `when()`'s words in a `<time>` whose `datetime` (and tooltip) keep the
 * exact ISO instant for machines and the curious. Text that is not a time is shown as it is.
 */
export function time(iso: string | null | undefined): SafeHtml {
  if (!iso) return html`—`;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return html`${iso}`;
  const exact = d.toISOString();
  return html`<time datetime="${exact}" title="${exact}">${when(iso)}</time>`;
}

/** "<CRM> <account noun> acme.example (62515)": the account's name when the CRM said it, with its id. */
export function installationTitle(
  v: Pick<InstallationView, 'crm' | 'externalId'> & Partial<Pick<InstallationView, 'accountName'>>,
): string {
  const provider = providerFor(v.crm);
  const name = v.accountName ? `${v.accountName} (${v.externalId})` : v.externalId;
  return `${provider.label} ${provider.accountNoun} ${name}`;
}

export function isActive(run: RunSummary): boolean {
  return run.state === 'listing' || run.state === 'processing';
}

export function installationPath(id: string, suffix = ''): string {
  return `/admin/installations/${encodeURIComponent(id)}${suffix}`;
}
