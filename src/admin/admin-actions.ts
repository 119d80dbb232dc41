import type { AppContext } from '../app/context.js';
import type { InstallationService, RemovalResult } from '../app/installation-service.js';
import { ReportRequestError, type RequestOutcome } from '../app/report-requests.js';
import type { DecisionActor } from '../decisions/decision-log.js';
import type { MatchStatus } from '../fields.js';
import type { Installation } from '../installations/store.js';
import { ReportWriteScopeError } from '../reports/errors.js';
import type { DocumentInput } from '../reports/submissions.js';
import { type ReportRequest, RequestLockedError } from '../requests/request-store.js';
import type { RunSummary } from '../storage/runs.js';
import { AdminRequestError, explain, installationNotFound } from './errors.js';
import { AdminMassActions, type BulkReviewResult, evidenceOf } from './mass-actions.js';
import type { BulkReviewDecision, ReviewDecision } from './schemas.js';

/**
 * The changes an admin can make, shared by the HTML forms and the JSON API so both check and word things the
 * same way. Every failure leaves as an AdminRequestError (see errors.ts).
 */

export interface ReviewOutcome {
  recordId: string;
  action: ReviewDecision['action'];
  slug: string | null;
  /** The record's match status after the decision was written. */
  status: MatchStatus | null;
}

export { type BulkReviewResult, topTied } from './mass-actions.js';

export interface BulkReviewOutcome {
  action: BulkReviewDecision['action'];
  /** How many records were decided (linked or rejected). */
  done: number;
  results: BulkReviewResult[];
  /** The mass action kept for its undo (null when nothing was decided). */
  massId: string | null;
}

/** A pending request as the admin page and API show it. */
export interface PendingRequestView {
  recordId: string;
  submissionId: string;
  /** The company's name as sent to the service. */
  name: string | null;
  requestedAt: string;
  ageSeconds: number;
  document: ReportRequest['document'] | null;
}

/** Runs looked through for the latest preview (the sync history keeps 50). */
const RUNS_SCANNED_FOR_PREVIEW = 50;

const REQUEST_ERROR_STATUS: Record<ReportRequestError['code'], number> = {
  REQUEST_RECORD_NOT_FOUND: 404,
  REQUEST_RECORD_LINKED: 409,
  REQUEST_RECORD_UNNAMED: 422,
  REQUEST_DOCUMENT_INVALID: 400,
};

export class AdminActions {
  /** Undoing runs, bulk review decisions and undoing those: previewed, confirmed, kept for their own undo. */
  readonly mass: AdminMassActions;

  constructor(
    private readonly ctx: AppContext,
    private readonly service: InstallationService,
  ) {
    this.mass = new AdminMassActions(ctx, (id) => this.installation(id));
  }

  async installation(id: string): Promise<Installation> {
    const installation = await this.ctx.installations.get(id);
    if (!installation) throw installationNotFound(id);
    return installation;
  }

  /**
   * Accepting must name one of the offered candidates; a slug typed by hand may be any published report. Both
   * are written to the CRM before this returns.
   */
  async resolveReview(
    installationId: string,
    recordId: string,
    decision: ReviewDecision,
    by: DecisionActor,
  ): Promise<ReviewOutcome> {
    await this.installation(installationId);
    const item = await this.ctx.index.reviews.item(installationId, recordId);
    if (!item) {
      throw new AdminRequestError(
        404,
        'NOT_IN_REVIEW',
        `Record ${recordId} is not waiting for review (it may have been resolved already).`,
      );
    }
    if (decision.action === 'accept' && !item.candidates.some((c) => c.slug === decision.slug)) {
      throw new AdminRequestError(
        400,
        'NOT_A_CANDIDATE',
        `${decision.slug} is not one of the candidates offered for this record; use action "set" to link another report.`,
      );
    }
    try {
      await this.ctx.records.resolveReview(
        installationId,
        recordId,
        decision.action === 'reject' ? { action: 'reject' } : { action: 'link', slug: decision.slug },
      );
    } catch (err) {
      throw explain(err);
    }
    const status = await this.ctx.index.statusOf(installationId, recordId);
    const slug = decision.action === 'reject' ? null : decision.slug;
    const chosen = item.candidates.filter((c) => c.slug === slug);
    await this.ctx.decisions.add(installationId, [
      {
        action: decision.action,
        bulk: false,
        recordId,
        slug,
        by,
        evidence: {
          candidates: evidenceOf(decision.action === 'reject' ? item.candidates : chosen),
          offered: item.candidates.length,
        },
      },
    ]);
    return { recordId, action: decision.action, slug, status };
  }

  /**
   * Review at scale: accept each record's first candidate, or reject every candidate of each, in one request.
   * Records not waiting for review (decided meanwhile) and, for accept-first, records without candidates or
   * with tied top candidates are left alone and said so. The writes go through the batch path
   * (records/record-commands.ts); each record decided is logged, and the whole kept for its undo
   * (mass-actions.ts). With `confirm`, only if the set is still the one previewed.
   */
  async resolveReviews(
    installationId: string,
    bulk: BulkReviewDecision,
    by: DecisionActor,
    confirm?: string,
  ): Promise<BulkReviewOutcome> {
    const outcome = await this.mass.apply(installationId, { kind: 'review', bulk }, by, confirm);
    return {
      action: bulk.action,
      done: outcome.done,
      results: outcome.results ?? [],
      massId: outcome.massId,
    };
  }

  /** "This is not the company": the record becomes `no_match` by the admin's decision, written before return. */
  async unlink(
    installationId: string,
    recordId: string,
    by: DecisionActor,
  ): Promise<{ recordId: string; status: MatchStatus | null }> {
    await this.installation(installationId);
    await this.requireRecord(installationId, recordId);
    const [previousSlug = null] = await this.ctx.index.slugsOf(installationId, [recordId]);
    try {
      await this.ctx.records.unlinkRecords(installationId, [recordId]);
    } catch (err) {
      throw explain(err);
    }
    const status = await this.ctx.index.statusOf(installationId, recordId);
    if (status === 'no_match') {
      await this.ctx.decisions.add(installationId, [
        { action: 'unlink', bulk: false, recordId, slug: null, by, evidence: { previousSlug } },
      ]);
    }
    return { recordId, status };
  }

  /**
   * 404 unless the connector has seen the record or the CRM has it: an unlink of an id nobody knows must not
   * answer "Unlinked" (nothing was written).
   */
  private async requireRecord(installationId: string, recordId: string): Promise<void> {
    if ((await this.ctx.index.statusOf(installationId, recordId)) !== null) return;
    const { connector } = await this.ctx.runtime
      .open(installationId, { urgent: true })
      .catch((err: unknown) => {
        throw explain(err);
      });
    if ((await connector.readCompanies([recordId])).length > 0) return;
    throw new AdminRequestError(404, 'RECORD_NOT_FOUND', `The CRM has no record ${recordId}.`);
  }

  /**
   * "Match this record again": lifts a person's or an admin's `no_match` (the only way besides a person
   * setting a slug) and matches the record as a full sync would, written before return.
   */
  async rematch(
    installationId: string,
    recordId: string,
    by: DecisionActor,
  ): Promise<{ recordId: string; status: MatchStatus | null; slug: string | null }> {
    await this.installation(installationId);
    try {
      await this.ctx.records.rematchRecords(installationId, [recordId]);
    } catch (err) {
      throw explain(err);
    }
    const status = await this.ctx.index.statusOf(installationId, recordId);
    const [slug = null] = await this.ctx.index.slugsOf(installationId, [recordId]);
    if (status === null) {
      throw new AdminRequestError(404, 'RECORD_NOT_FOUND', `The CRM has no record ${recordId}.`);
    }
    await this.ctx.decisions.add(installationId, [
      { action: 'rematch', bulk: false, recordId, slug, by, evidence: {} },
    ]);
    return { recordId, status, slug };
  }

  /**
   * Takes back the auto-links one run made; records a person or an admin decided about since the run started
   * keep their link. Kept as a mass action, so it can be undone in turn.
   */
  async undoRun(
    installationId: string,
    runId: string,
    by: DecisionActor,
    confirm?: string,
  ): Promise<{ runId: string; unlinked: number; kept: number; massId: string | null }> {
    const outcome = await this.mass.apply(installationId, { kind: 'undo-run', runId }, by, confirm);
    return { runId, unlinked: outcome.done, kept: outcome.kept, massId: outcome.massId };
  }

  /** Checked with the service at once; a refused key is explained and not stored. */
  async setReportKey(
    installationId: string,
    apiKey: string,
  ): Promise<{ sandbox: boolean; resumedRunId: string | null }> {
    await this.installation(installationId);
    try {
      return await this.service.setReportKey(installationId, apiKey);
    } catch (err) {
      throw explain(err);
    }
  }

  /** 409 when the server has no key of its own to go back to. */
  async useServerKey(installationId: string): Promise<{ resumedRunId: string | null }> {
    await this.installation(installationId);
    if (!this.ctx.config.reports.apiKey) {
      throw new AdminRequestError(
        409,
        'NO_SERVER_KEY',
        "The server has no key of its own (REPORTS_API_KEY is not set), so this installation's key is kept.",
      );
    }
    return this.service.useServerKey(installationId);
  }

  /**
   * A sync asked for while one is under way joins it (`joined`: the run id is that run's); a full one asked
   * for during an incremental or reconcile run supersedes it (Pipeline.requestSync).
   */
  async startSync(
    installationId: string,
    full: boolean,
  ): Promise<{ runId: string; kind: 'full' | 'incremental'; joined: boolean }> {
    const installation = await this.installation(installationId);
    if (installation.status !== 'connected') {
      const why = installation.statusReason ? `: ${installation.statusReason}` : '';
      const fix =
        installation.status === 'key_invalid'
          ? 'enter a working report-service key first'
          : 'reconnect the CRM first';
      throw new AdminRequestError(
        409,
        'INSTALLATION_NOT_CONNECTED',
        `This installation is ${installation.status.replace('_', ' ')}${why}; ${fix}.`,
      );
    }
    const kind = full ? 'full' : 'incremental';
    const start = await this.ctx.pipeline.requestSync(installationId, kind);
    return { runId: start.runId, kind, joined: start.joined };
  }

  /**
   * Asks the report service for a report on this record (and attaches the document). A key without the
   * `write` scope is a 422 that names the scope and says what to do; nothing is stored and the record is
   * unchanged.
   */
  async requestReport(
    installationId: string,
    recordId: string,
    document: DocumentInput | null,
  ): Promise<RequestOutcome> {
    await this.installation(installationId);
    try {
      return await this.ctx.reportRequests.request(installationId, recordId, document ?? undefined);
    } catch (err) {
      if (err instanceof ReportWriteScopeError) {
        throw new AdminRequestError(422, err.code, `${capitalise(err.message)}.`, {
          missingScope: err.missingScope,
        });
      }
      if (err instanceof ReportRequestError) {
        throw new AdminRequestError(REQUEST_ERROR_STATUS[err.code], err.code, `${capitalise(err.message)}.`);
      }
      if (err instanceof RequestLockedError) {
        throw new AdminRequestError(
          409,
          err.code,
          'A request for this record is being made right now; reload in a moment.',
        );
      }
      throw explain(err);
    }
  }

  /** Requests still waiting for their report, oldest first, with their age. */
  async pendingRequests(installationId: string, now = Date.now()): Promise<PendingRequestView[]> {
    await this.installation(installationId);
    return (await this.ctx.requests.list(installationId))
      .filter((r) => r.state === 'pending')
      .map((r) => ({
        recordId: r.recordId,
        submissionId: r.submissionId,
        name: r.sent.name ?? null,
        requestedAt: r.requestedAt,
        ageSeconds: Math.max(0, Math.round((now - Date.parse(r.requestedAt)) / 1000)),
        document: r.document ?? null,
      }));
  }

  /**
   * Lets a sandbox key write fixture scores into this production CRM, or stops it. Allowing starts a full sync,
   * so the writes refused so far are made.
   */
  async setAllowFixtureWrites(
    installationId: string,
    allow: boolean,
  ): Promise<{ allowFixtureWrites: boolean; runId: string | null }> {
    await this.installation(installationId);
    await this.ctx.installations.setAllowFixtureWrites(installationId, allow);
    this.ctx.runtime.forget(installationId);
    // A run under way refused its fixture writes so far: a new full run takes its place.
    const runId = allow
      ? (await this.ctx.pipeline.requestSync(installationId, 'full', { restart: true })).runId
      : null;
    return { allowFixtureWrites: allow, runId };
  }

  /** Switches alert activities (the provider's `activity`: a note, a task) on or off. */
  async setAlertActivity(installationId: string, on: boolean): Promise<{ alertActivity: boolean }> {
    await this.installation(installationId);
    await this.ctx.installations.setAlertActivity(installationId, on);
    return { alertActivity: on };
  }

  /** Starts a preview: matching without writing (409 PREVIEW_REFUSED when the installation cannot run). */
  async startPreview(installationId: string): Promise<{ runId: string }> {
    await this.installation(installationId);
    return this.service.preview(installationId).catch((err: unknown) => {
      throw explain(err);
    });
  }

  /** The latest preview run (running or finished), or null when none was made. */
  async latestPreview(installationId: string): Promise<RunSummary | null> {
    await this.installation(installationId);
    return (
      (await this.ctx.runs.recent(installationId, RUNS_SCANNED_FOR_PREVIEW)).find(
        (r) => r.kind === 'preview',
      ) ?? null
    );
  }

  /** 409 NOT_PENDING when the installation was already let in. */
  async approve(installationId: string): Promise<{ approved: string; runId: string }> {
    await this.installation(installationId);
    const started = await this.service.approve(installationId);
    if (!started) {
      throw new AdminRequestError(409, 'NOT_PENDING', 'This installation is not waiting for approval.');
    }
    return { approved: installationId, runId: started.runId };
  }

  async remove(installationId: string): Promise<RemovalResult> {
    await this.installation(installationId);
    return this.service.remove(installationId);
  }
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
