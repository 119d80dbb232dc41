import type { Decision } from '../../decisions/decision-log.js';
import { DECISION_LOG_SIZE } from '../../decisions/decision-log.js';
import type { MassAction } from '../../decisions/mass-actions.js';
import type { ReviewItem } from '../../storage/review-codec.js';
import type { RunSummary } from '../../storage/runs.js';
import type { PendingRequestView } from '../admin-actions.js';
import { html, type SafeHtml } from '../html.js';
import type { InstallationView } from '../overview.js';
import { REVIEW_PAGE_SIZES } from '../schemas.js';
import { massActionsSection } from './confirm.js';
import {
  bulkReviewForm,
  correctionsSection,
  decisionLogSection,
  type LinkedItem,
  reviewPageSizes,
} from './corrections.js';
import { installationPath, installationTitle, num } from './format.js';
import { csrfField, layout, notice, problem } from './layout.js';
import {
  connectionBadge,
  connectionDetails,
  coverageChart,
  keyDetails,
  keyForm,
  rateDetails,
  reviewItemView,
  runsTable,
  sandboxBadge,
  scoreChart,
} from './parts.js';
import { previewSection } from './preview.js';
import { alertSection, type NoMatchItem, noMatchSection, pendingRequestsSection } from './requests.js';

/** `/admin/installations/:id`: everything about one installation and every change an admin can make to it. */

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
  review: readonly ReviewItem[];
  reviewPage: number;
  /** Review items per page (one of REVIEW_PAGE_SIZES). */
  reviewPerPage?: number;
  runs: readonly RunSummary[];
  /** A page of linked records, each with an unlink button. */
  linked?: readonly LinkedItem[];
  /** The latest decisions, newest first, and how many the log keeps now. */
  decisions?: readonly Decision[];
  decisionCount?: number;
  /** The latest mass actions (undone syncs, bulk decisions), each with "Undo this". */
  massActions?: readonly MassAction[];
  /** The latest preview run, or null when none was made. */
  preview?: RunSummary | null;
  /** Companies left `no_match` (a page of them) and how many there are. */
  noMatch: readonly NoMatchItem[];
  noMatchTotal: number;
  pending: readonly PendingRequestView[];
  alertActivity: boolean;
  /** Where to install the app again to grant an activity's optional scope; null when none is needed. */
  reinstallUrl: string | null;
  csrfToken: string | null;
  notice?: string | null;
  /** A failed form: which one and why (shown at the top and beside the form). */
  error?: { form: PageForm; message: string } | null;
}

export function installationPage(o: InstallationPageInput): SafeHtml {
  const { view: v } = o;
  const title = installationTitle(v);
  const per = o.reviewPerPage ?? REVIEW_PAGE_SIZES[0];
  const pages = Math.max(1, Math.ceil(o.review.length / per));
  const page = Math.min(o.reviewPage, pages);
  const shown = o.review.slice((page - 1) * per, page * per);
  const perQuery = per === REVIEW_PAGE_SIZES[0] ? '' : `&per=${per}`;
  const pageLink = (n: number, text: string) =>
    html`<a href="${installationPath(v.id, `?page=${n}${perQuery}#review`)}">${text}</a>`;
  const pager =
    pages > 1
      ? html`<nav class="pager" aria-label="Review queue pages">
          ${page > 1 ? pageLink(page - 1, 'Previous page') : ''}
          <span>Page ${page} of ${pages}</span>
          ${page < pages ? pageLink(page + 1, 'Next page') : ''}
        </nav>`
      : '';
  const runsUrl = `/admin/api/installations/${encodeURIComponent(v.id)}/runs`;

  return layout(
    { title, csrfToken: o.csrfToken, section: 'installations', signedIn: true },
    html`<p class="crumbs"><a href="/admin">Installations</a> / ${title}</p>
      <h1>${title} ${connectionBadge(v)} ${sandboxBadge(v)}</h1>
      ${notice(o.notice)}
      ${problem(o.error?.message)}
      ${fixtureRefusal(v, o.csrfToken, o.error?.form === 'fixtures' ? o.error.message : null)}

      <div class="grid-2">
        <section class="card" aria-labelledby="connection">
          <h2 id="connection">Connection</h2>
          ${connectionDetails(v)}
        </section>
        <section class="card" aria-labelledby="key">
          <h2 id="key">Report-service key</h2>
          ${keyDetails(v)}
          ${rateDetails(v)}
          ${keyForm(v, o.csrfToken, o.error?.form === 'key' ? o.error.message : null)}
        </section>
      </div>

      ${previewSection({ view: v, preview: o.preview ?? null, csrf: o.csrfToken, error: o.error?.form === 'preview' ? o.error.message : null })}

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
      </section>

      <section class="card" aria-labelledby="review">
        <h2 id="review">Review queue (${num(o.review.length)})</h2>
        <p>These companies have more than one plausible report. Accept a candidate, reject them all, or type the
          slug of the right report. Each decision is written to the CRM at once. To decide many at once, select
          them and accept each one's first candidate or reject them together.</p>
        ${
          o.review.length === 0
            ? html`<p>Nothing waits for review.</p>`
            : html`${reviewPageSizes(v, REVIEW_PAGE_SIZES, per)}${bulkReviewForm(v, shown.length, o.csrfToken, { page, per })}${pager}${shown.map((item) => reviewItemView(v.id, item, o.csrfToken))}${pager}`
        }
      </section>

      ${correctionsSection({
        view: v,
        linked: o.linked ?? [],
        linkedTotal: v.coverage.counts.matched,
        runs: o.runs,
        csrf: o.csrfToken,
        error: o.error?.form === 'links' || o.error?.form === 'undo' ? o.error.message : null,
      })}
      ${decisionLogSection({ view: v, decisions: o.decisions ?? [], total: o.decisionCount ?? 0, limit: DECISION_LOG_SIZE, undoable: new Set((o.massActions ?? []).filter((m) => !m.undoneBy).map((m) => m.id)), csrf: o.csrfToken })}
      ${massActionsSection({ installationId: v.id, actions: o.massActions ?? [], csrf: o.csrfToken })}

      ${pendingRequestsSection(o.pending)}
      ${noMatchSection(v, o.noMatch, o.noMatchTotal, o.csrfToken)}
      ${alertSection(v, o.alertActivity, o.csrfToken, o.reinstallUrl)}

      <section class="card danger-zone" aria-labelledby="disconnect">
        <h2 id="disconnect">Disconnect</h2>
        <p>Stops all work for this installation and deletes its tokens, key and link index from the connector. The
          CRM's records keep their values.</p>
        <p><a class="button danger" href="${installationPath(v.id, '/disconnect')}">Disconnect ${title}…</a></p>
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
