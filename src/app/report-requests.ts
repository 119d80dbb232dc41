import type { Logger } from 'pino';
import type { CompanyRecord } from '../crm/connector.js';
import type { InstallationRuntime } from '../pipeline/runtime.js';
import { checkedDocument, DocumentRefusedError } from '../reports/document-types.js';
import type { DocumentInput, SubmissionInput } from '../reports/submissions.js';
import { type ReportRequest, RequestLockedError, type RequestStore } from '../requests/request-store.js';

/**
 * Asking the service for a report on a company that has none: one submission from what the CRM knows, an
 * optional document, the request kept in Redis, the record marked `requested`. The order is chosen so that a
 * refusal changes nothing: the submission call comes first, and only its success stores anything or touches
 * the record.
 */

/** The largest document a person may attach (the admin upload and `--document` check it before sending). */
export const MAX_REQUEST_DOCUMENT_BYTES = 10 * 1024 * 1024;

export interface RequestOutcome {
  submissionId: string;
  /** True when the record already had a pending request: that one is returned, nothing new is sent. */
  existing: boolean;
  request: ReportRequest;
}

export type RequestErrorCode =
  | 'REQUEST_RECORD_NOT_FOUND'
  | 'REQUEST_RECORD_LINKED'
  | 'REQUEST_RECORD_UNNAMED'
  | 'REQUEST_DOCUMENT_INVALID';

/** Why a request cannot be made for this record; nothing was sent. */
export class ReportRequestError extends Error {
  constructor(
    readonly code: RequestErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ReportRequestError';
  }
}

export interface ReportRequestDeps {
  store: RequestStore;
  runtime: InstallationRuntime;
  /** Writes the record's fields from its current state (it is `requested` from now on). */
  refresh: (installationId: string, recordIds: string[]) => Promise<void>;
  logger: Logger;
}

function present(value: string | null): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

/** The submission's content: every fact the CRM has, the record id as the caller's reference. */
export function submissionFor(record: CompanyRecord): SubmissionInput {
  const name = present(record.name);
  if (!name) {
    throw new ReportRequestError(
      'REQUEST_RECORD_UNNAMED',
      `record ${record.id} has no name: give the company a name in the CRM, then request a report`,
    );
  }
  const input: SubmissionInput = { name, reference: record.id };
  const domain = present(record.domain);
  const country = present(record.country);
  const city = present(record.city);
  const industry = present(record.industry);
  if (domain) input.domain = domain;
  if (country) input.country = country;
  if (city) input.city = city;
  if (industry) input.industry = industry;
  return input;
}

export class ReportRequests {
  constructor(private readonly deps: ReportRequestDeps) {}

  async request(installationId: string, recordId: string, given?: DocumentInput): Promise<RequestOutcome> {
    const document = given ? await checkDocument(given) : undefined;
    const waiting = await this.deps.store.pending(installationId, recordId);
    if (waiting) return { submissionId: waiting.submissionId, existing: true, request: waiting };
    try {
      return await this.deps.store.exclusive(installationId, recordId, () =>
        this.make(installationId, recordId, document),
      );
    } catch (err) {
      if (!(err instanceof RequestLockedError)) throw err;
      // Someone else is making this record's request: theirs is the answer once it is stored.
      const theirs = await this.waitForPending(installationId, recordId);
      if (theirs) return { submissionId: theirs.submissionId, existing: true, request: theirs };
      throw err;
    }
  }

  private async make(
    installationId: string,
    recordId: string,
    document: DocumentInput | undefined,
  ): Promise<RequestOutcome> {
    const again = await this.deps.store.pending(installationId, recordId);
    if (again) return { submissionId: again.submissionId, existing: true, request: again };
    const { connector, client } = await this.deps.runtime.open(installationId, { urgent: true });
    const [record] = await connector.readCompanies([recordId]);
    if (!record) {
      throw new ReportRequestError(
        'REQUEST_RECORD_NOT_FOUND',
        `record ${recordId} does not exist in the CRM (deleted or merged?)`,
      );
    }
    const slug = present(typeof record.fields.slug === 'string' ? record.fields.slug : null);
    if (slug) {
      throw new ReportRequestError(
        'REQUEST_RECORD_LINKED',
        `record ${recordId} is already linked to the report ${slug}: clear its report slug first if that link is wrong`,
      );
    }
    const sent = submissionFor(record);
    // A refusal (403 without `write`, 401, 400) leaves here: nothing was stored and the record is unchanged.
    const receipt = await client.createSubmission(sent);
    const request: ReportRequest = {
      installationId,
      recordId,
      submissionId: receipt.id,
      keyIdentity: client.keyIdentity,
      state: 'pending',
      requestedAt: new Date().toISOString(),
      sent: { ...sent },
      answer: receipt.answer,
    };
    if (document) {
      const meta = { filename: document.filename, size: document.bytes.byteLength };
      try {
        const uploaded = await client.uploadDocument(receipt.id, document);
        request.document = { ...meta, ...(uploaded.id ? { id: uploaded.id } : {}), answer: uploaded.answer };
      } catch (err) {
        // The submission exists at the service whatever happens to the file, so the request is kept and
        // the failure shown with it; the document can be sent again with the service's own tools.
        request.document = { ...meta, error: err instanceof Error ? err.message : String(err) };
        this.deps.logger.warn(
          { err, installationId, recordId },
          'document upload for a report request failed',
        );
      }
    }
    await this.deps.store.save(request);
    await this.deps.refresh(installationId, [recordId]);
    return { submissionId: receipt.id, existing: false, request };
  }

  private async waitForPending(installationId: string, recordId: string): Promise<ReportRequest | null> {
    for (let i = 0; i < 40; i += 1) {
      const found = await this.deps.store.pending(installationId, recordId);
      if (found) return found;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    return null;
  }
}

/** The document as it is sent on (checkedDocument: an allowed type on its bytes, a safe filename). */
async function checkDocument(document: DocumentInput): Promise<DocumentInput> {
  if (document.bytes.byteLength > MAX_REQUEST_DOCUMENT_BYTES) {
    throw new ReportRequestError(
      'REQUEST_DOCUMENT_INVALID',
      `the document ${document.filename} is over ${MAX_REQUEST_DOCUMENT_BYTES / 1024 / 1024} MB`,
    );
  }
  try {
    return await checkedDocument(document);
  } catch (err) {
    if (err instanceof DocumentRefusedError)
      throw new ReportRequestError(
        'REQUEST_DOCUMENT_INVALID',
        `the document ${document.filename}: ${err.message}`,
      );
    throw err;
  }
}
