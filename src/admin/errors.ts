import type { z } from 'zod';
import { KeyCheckError, PreviewRefusedError } from '../app/installation-service.js';
import { CrmDisconnectedError, CrmError } from '../crm/errors.js';
import { InstallationNotFoundError, InstallationStoppedError, NoReportKeyError } from '../pipeline/errors.js';
import { ReviewWriteError } from '../records/errors.js';
import { ReportNotFoundError, ReportServiceError } from '../reports/errors.js';

/**
 * What the admin page and its API answer when a request cannot be done: an HTTP status, a stable string code
 * for scripts, and a sentence for the person at the screen.
 */
export class AdminRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'AdminRequestError';
  }
}

export function badRequest(error: z.ZodError, what: string): AdminRequestError {
  const issues = error.issues.map((i) =>
    i.path.length > 0 ? `${i.path.join('.')}: ${i.message}` : i.message,
  );
  return new AdminRequestError(400, 'BAD_REQUEST', `${what} is not valid: ${issues.join('; ')}`, { issues });
}

export function installationNotFound(id: string): AdminRequestError {
  return new AdminRequestError(404, 'INSTALLATION_NOT_FOUND', `There is no installation ${id}.`);
}

/**
 * Turns what the pipeline, the CRM or the report service threw into words for the admin. Anything not listed
 * here is a fault of ours: it is rethrown so the error handler logs it and answers 500.
 */
export function explain(err: unknown): AdminRequestError {
  if (err instanceof AdminRequestError) return err;
  if (err instanceof PreviewRefusedError) {
    return new AdminRequestError(409, err.code, `This installation cannot be previewed: ${err.reason}.`);
  }
  if (err instanceof KeyCheckError) {
    return new AdminRequestError(422, err.code, err.message, { keyStatus: err.status });
  }
  if (err instanceof ReportNotFoundError) {
    return new AdminRequestError(
      422,
      err.code,
      'No published report has that slug: check it on the report service.',
    );
  }
  if (err instanceof ReviewWriteError) {
    return new AdminRequestError(502, err.code, `${capitalise(err.message)}.`, {
      recordErrorCode: err.recordErrorCode,
    });
  }
  if (err instanceof InstallationNotFoundError) return installationNotFound(err.installationId);
  if (err instanceof InstallationStoppedError) {
    return new AdminRequestError(409, err.code, `This installation is stopped: ${err.reason}.`);
  }
  if (err instanceof CrmDisconnectedError) {
    return new AdminRequestError(
      409,
      err.code,
      `The CRM is disconnected: ${err.message}. Reconnect it first.`,
    );
  }
  if (err instanceof NoReportKeyError)
    return new AdminRequestError(409, err.code, `${capitalise(err.message)}.`);
  if (err instanceof CrmError) {
    return new AdminRequestError(502, err.code, `The CRM did not accept the request: ${err.message}`);
  }
  if (err instanceof ReportServiceError) {
    return new AdminRequestError(
      502,
      err.code,
      `The report service did not answer as expected: ${err.message}`,
    );
  }
  throw err;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
