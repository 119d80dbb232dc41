import type { AppContext } from '../app/context.js';
import type { InstallationService } from '../app/installation-service.js';
import type { MatchStatus } from '../fields.js';
import type { Installation } from '../installations/store.js';
import { AdminRequestError, explain, installationNotFound } from './errors.js';
import type { ReviewDecision } from './schemas.js';

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

export class AdminActions {
  constructor(
    private readonly ctx: AppContext,
    private readonly service: InstallationService,
  ) {}

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
  ): Promise<ReviewOutcome> {
    await this.installation(installationId);
    const item = await this.ctx.index.reviewItem(installationId, recordId);
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
      await this.ctx.pipeline.resolveReview(
        installationId,
        recordId,
        decision.action === 'reject' ? { action: 'reject' } : { action: 'link', slug: decision.slug },
      );
    } catch (err) {
      throw explain(err);
    }
    const status = await this.ctx.index.statusOf(installationId, recordId);
    return {
      recordId,
      action: decision.action,
      slug: decision.action === 'reject' ? null : decision.slug,
      status,
    };
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

  async startSync(
    installationId: string,
    full: boolean,
  ): Promise<{ runId: string; kind: 'full' | 'incremental' }> {
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
    return { runId: await this.ctx.pipeline.startSync(installationId, kind), kind };
  }

  async remove(installationId: string): Promise<void> {
    await this.installation(installationId);
    await this.service.remove(installationId);
  }
}
