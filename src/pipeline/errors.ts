/** Pipeline-level failures that are not a CRM's or the report service's own. */

export class NoReportKeyError extends Error {
  readonly code = 'NO_REPORT_KEY';
  constructor(readonly installationId: string) {
    super('no report-service API key: enter one on the admin page or set REPORTS_API_KEY');
    this.name = 'NoReportKeyError';
  }
}

/** A sandbox report key on a production CRM: record writes are refused (app/fixture-guard.ts). */
export class FixtureWriteRefusedError extends Error {
  readonly code = 'FIXTURE_WRITE_REFUSED';
  constructor(
    message: string,
    readonly installationId: string,
  ) {
    super(message);
    this.name = 'FixtureWriteRefusedError';
  }
}

/** A preview asked the CRM to write: a bug, never a partial write (app/preview-guard.ts). */
export class PreviewWriteError extends Error {
  readonly code = 'PREVIEW_WRITE';
  constructor(
    readonly installationId: string,
    readonly method: string,
  ) {
    super(`a preview of installation ${installationId} tried to write (${method}); nothing was written`);
    this.name = 'PreviewWriteError';
  }
}

export class InstallationNotFoundError extends Error {
  readonly code = 'INSTALLATION_NOT_FOUND';
  constructor(readonly installationId: string) {
    super(`installation ${installationId} does not exist`);
    this.name = 'InstallationNotFoundError';
  }
}

/** The installation is paused on purpose (key invalid, disconnected): its jobs stop instead of retrying. */
export class InstallationStoppedError extends Error {
  readonly code = 'INSTALLATION_STOPPED';
  constructor(
    readonly installationId: string,
    readonly reason: string,
  ) {
    super(`installation ${installationId} is stopped: ${reason}`);
    this.name = 'InstallationStoppedError';
  }
}
