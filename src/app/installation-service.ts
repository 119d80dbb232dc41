import type { EnsureFieldsResult } from '../crm/connector.js';
import { CrmRevocationError } from '../crm/errors.js';
import { isLetIn } from '../installations/let-in.js';
import type { Installation } from '../installations/store.js';
import { isPolled } from '../pipeline/runtime.js';
import { providerFor } from '../providers.js';
import { ReportForbiddenError, ReportUnauthorizedError } from '../reports/errors.js';
import type { AppContext } from './context.js';

/**
 * What happens to an installation over its life: installed (fields, polling, first backfill), given a
 * report-service key, disconnected or removed. Shared by the OAuth callbacks, token mode, the admin page and
 * the CLI.
 */

export class KeyCheckError extends Error {
  readonly code = 'REPORT_KEY_REFUSED';
  constructor(
    message: string,
    readonly status: 401 | 403,
  ) {
    super(message);
    this.name = 'KeyCheckError';
  }
}

/** A preview cannot run for this installation now; the message says why. */
export class PreviewRefusedError extends Error {
  readonly code = 'PREVIEW_REFUSED';
  constructor(
    readonly installationId: string,
    readonly reason: string,
  ) {
    super(`installation ${installationId} cannot be previewed: ${reason}`);
    this.name = 'PreviewRefusedError';
  }
}

export class InstallationService {
  constructor(private readonly ctx: AppContext) {}

  /**
   * An OAuth install finished. A pending installation is let in at once when its portal or org is in
   * INSTALL_ALLOWLIST or it has a report-service key of its own; otherwise it waits for an operator, costing
   * nothing (no fields created, no backfill, no report read). Returns the first run, or null while pending.
   */
  async admit(installation: Installation): Promise<string | null> {
    let current = installation;
    if (!isLetIn(current)) {
      const entry = `${current.crm}:${current.externalId}`;
      const by = this.ctx.config.installAllowlist.includes(entry)
        ? 'allowlist'
        : current.hasReportsApiKey
          ? 'own_key'
          : null;
      if (!by) {
        this.ctx.logger.warn(
          { installationId: current.id, accountName: current.accountName, installedBy: current.installedBy },
          'new installation waits for approval on the admin page',
        );
        return null;
      }
      await this.ctx.installations.approve(current.id, by);
      const after = await this.ctx.installations.get(current.id);
      // Refused when a change of connection or host is held: that is the operator's to approve.
      if (!after || !isLetIn(after)) {
        this.ctx.logger.warn(
          { installationId: current.id, changeHeldAt: after?.changeHeldAt },
          'reinstalled installation waits for approval on the admin page',
        );
        return null;
      }
      current = after;
    }
    return (await this.installed(current)).runId;
  }

  /** An operator lets a pending installation in: then it is set up and backfilled like any other. */
  async approve(installationId: string): Promise<{ runId: string } | null> {
    if (!(await this.ctx.installations.approve(installationId, 'admin'))) return null;
    const installation = await this.ctx.installations.get(installationId);
    if (!installation) return null;
    this.ctx.runtime.forget(installationId);
    return { runId: (await this.installed(installation)).runId };
  }

  /**
   * Matches every record as a full sync would and writes nothing; returns the preview run. An installation
   * not let in yet may be previewed (its operator is deciding whether to let it in): its CRM is read, never
   * changed, not even its fields (runtime.ts opens it with previewBeforeApproval: a field it lacks reads as
   * empty). Throws PreviewRefusedError for an installation that cannot run (disconnected, key refused, no key).
   */
  async preview(installationId: string): Promise<{ runId: string }> {
    const installation = await this.ctx.installations.get(installationId);
    if (!installation) throw new PreviewRefusedError(installationId, 'it does not exist');
    if (installation.status === 'disconnected' || installation.status === 'key_invalid') {
      const why = installation.statusReason ? `: ${installation.statusReason}` : '';
      throw new PreviewRefusedError(installationId, `it is ${installation.status.replace('_', ' ')}${why}`);
    }
    if (!installation.hasReportsApiKey && !this.ctx.config.reports.apiKey) {
      throw new PreviewRefusedError(installationId, 'it has no report-service key: enter one first');
    }
    return { runId: await this.ctx.pipeline.startSync(installationId, 'preview') };
  }

  /** Creates the connector's fields, schedules polling where the CRM needs it, and starts the first backfill. */
  async installed(installation: Installation): Promise<{ fields: EnsureFieldsResult; runId: string }> {
    const connector = this.ctx.runtime.connectorFor(installation);
    const fields = await connector.ensureFields();
    if (fields.problems.length > 0) {
      this.ctx.logger.warn(
        { installationId: installation.id, problems: fields.problems },
        'some fields need attention',
      );
    }
    if (fields.notes?.length) {
      this.ctx.logger.warn(
        { installationId: installation.id, notes: fields.notes },
        'set-up left to an admin',
      );
    }
    const pollEveryMs = providerFor(installation.crm).pollIntervalMs(this.ctx.config);
    if (isPolled(connector) && pollEveryMs !== null) {
      await this.ctx.schedules.schedulePoll(installation.id, pollEveryMs);
    }
    const runId = await this.ctx.pipeline.startSync(installation.id, 'initial');
    return { fields, runId };
  }

  /**
   * Checks a report-service key with `me { sandbox }` before storing it (encrypted). A refused key is
   * explained in plain words and not stored. A stopped installation resumes with a full sync.
   */
  /**
   * Back to the server's key (REPORTS_API_KEY) after one was entered for the installation. A `key_invalid`
   * installation (its own key refused) is connected again and synced: the refusal was about the key it drops.
   */
  async useServerKey(installationId: string): Promise<{ resumedRunId: string | null }> {
    const before = await this.ctx.installations.get(installationId);
    await this.ctx.installations.clearReportsApiKey(installationId);
    this.ctx.runtime.forget(installationId);
    if (before?.status !== 'key_invalid') return { resumedRunId: null };
    await this.ctx.installations.setStatus(installationId, 'connected');
    return { resumedRunId: await this.ctx.pipeline.startSync(installationId, 'full') };
  }

  async setReportKey(
    installationId: string,
    apiKey: string,
  ): Promise<{ sandbox: boolean; resumedRunId: string | null }> {
    const client = this.ctx.runtime.clientForKey(apiKey);
    let sandbox: boolean;
    try {
      sandbox = (await client.me()).sandbox;
    } catch (err) {
      if (err instanceof ReportUnauthorizedError) {
        throw new KeyCheckError(
          'The report service refused this key (401): it is mistyped, expired or revoked.',
          401,
        );
      }
      if (err instanceof ReportForbiddenError) {
        throw new KeyCheckError(
          'This key lacks the read scope the connector needs (403): create a key with read access.',
          403,
        );
      }
      throw err;
    }
    const before = await this.ctx.installations.get(installationId);
    await this.ctx.installations.setReportsApiKey(installationId, apiKey, { sandbox });
    this.ctx.runtime.forget(installationId);
    let resumedRunId: string | null = null;
    // A key of its own lets a pending installation in: it spends its own quota, not the operator's.
    if (before && !isLetIn(before) && (await this.ctx.installations.approve(installationId, 'own_key'))) {
      const approved = await this.ctx.installations.get(installationId);
      if (approved) resumedRunId = (await this.installed(approved)).runId;
      return { sandbox, resumedRunId };
    }
    if (before?.status === 'key_invalid') {
      await this.ctx.installations.setStatus(installationId, 'connected');
      resumedRunId = await this.ctx.pipeline.startSync(installationId, 'full');
    }
    return { sandbox, resumedRunId };
  }

  /**
   * Disconnects: jobs stop, the CRM is asked to end the app's access (OAuth installs), then tokens, keys and
   * indexes are deleted. The CRM's data stays as it is. The removal here happens whatever the CRM answers; the
   * result says whether its access ended there too and, if not, what a person must do in the CRM.
   */
  async remove(installationId: string): Promise<RemovalResult> {
    await this.ctx.installationStop.stop(installationId, 'the installation was removed');
    const revocation = await this.revoke(installationId);
    // The hash goes first, and only here (`installations.remove` below deletes the rest, not the hash again):
    // from then on a batch still in flight writes no index state, run-links or pending slugs (their scripts
    // check it), so none is left behind when the installation's keys are deleted below.
    await this.ctx.installations.retire(installationId);
    await this.ctx.index.slugs.forgetInstallation(installationId);
    await this.ctx.requests.forgetInstallation(installationId);
    await this.ctx.runs.removeAll(installationId);
    await this.ctx.installations.remove(installationId);
    this.ctx.runtime.forget(installationId);
    if (revocation.outcome === 'failed') {
      this.ctx.logger.warn(
        { installationId, reason: revocation.message },
        "installation removed, but the CRM's access could not be revoked",
      );
    }
    return { removed: installationId, revocation };
  }

  private async revoke(installationId: string): Promise<Revocation> {
    const installation = await this.ctx.installations.get(installationId);
    if (!installation) return { outcome: 'nothing_to_revoke', message: 'The installation was already gone.' };
    const provider = providerFor(installation.crm);
    if (installation.mode === 'token') {
      return {
        outcome: 'nothing_to_revoke',
        message: `The token is the operator's own (${provider.tokenVariable}): nothing was revoked.`,
      };
    }
    const tokens = await this.ctx.installations.getTokens(installationId);
    if (!tokens) {
      return { outcome: 'nothing_to_revoke', message: `The app held no ${provider.label} tokens any more.` };
    }
    const signal = AbortSignal.timeout(REVOKE_TIMEOUT_MS);
    // The token refresh inside revoke has no signal of its own: the race bounds the whole call.
    const timedOut = new Promise<never>((_, reject) => {
      signal.addEventListener('abort', () =>
        reject(new Error(`${provider.label} did not answer within ${REVOKE_TIMEOUT_MS / 1000} s`)),
      );
    });
    timedOut.catch(() => undefined);
    try {
      const outcome = await Promise.race([
        provider.revoke(
          this.ctx.config,
          {
            installation,
            tokens,
            accessToken: this.ctx.tokens.source(installationId),
            signal,
          },
          this.ctx.stores.provider,
        ),
        timedOut,
      ]);
      return outcome === 'revoked'
        ? { outcome, message: `${provider.label} ended the app's access.` }
        : {
            outcome,
            message: `${provider.label} no longer knew the app's tokens: nothing was left to revoke.`,
          };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      return {
        outcome: 'failed',
        message: `Removed here, but ${provider.label}'s access was not revoked: ${message}.`,
        whatToDo:
          err instanceof CrmRevocationError
            ? err.whatToDo
            : `End the app's access in ${provider.label} by hand (uninstall it there).`,
      };
    }
  }
}

/** How long removal waits for the CRM to revoke; past it the removal completes here and says so. */
export const REVOKE_TIMEOUT_MS = 10_000;

export type Revocation =
  | { outcome: 'revoked' | 'already_revoked' | 'nothing_to_revoke'; message: string }
  | { outcome: 'failed'; message: string; whatToDo: string };

export interface RemovalResult {
  removed: string;
  revocation: Revocation;
}
