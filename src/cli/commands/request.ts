import { readFile, stat } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { MAX_REQUEST_DOCUMENT_BYTES, ReportRequestError } from '../../app/report-requests.js';
import { ReportServiceError, ReportWriteScopeError } from '../../reports/errors.js';
import type { DocumentInput } from '../../reports/submissions.js';
import { RequestLockedError } from '../../requests/request-store.js';
import { parseCommandArgs } from '../args.js';
import { CommandFailedError, UsageError } from '../errors.js';
import type { CommandIo } from '../io.js';
import { openContext } from './context.js';

/** Types the service is told for common document files; anything else goes as bytes. */
const CONTENT_TYPES: Record<string, string> = {
  '.pdf': 'application/pdf',
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.csv': 'text/csv',
  '.json': 'application/json',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  '.pptx': 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
};

async function readDocument(path: string): Promise<DocumentInput> {
  let size: number;
  try {
    size = (await stat(path)).size;
  } catch {
    throw new CommandFailedError(`--document ${path}: no such file`);
  }
  if (size > MAX_REQUEST_DOCUMENT_BYTES)
    throw new CommandFailedError(`--document ${path} is over ${MAX_REQUEST_DOCUMENT_BYTES / 1024 / 1024} MB`);
  return {
    filename: basename(path),
    contentType: CONTENT_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream',
    // The Buffer itself (a Uint8Array): no second copy of the file.
    bytes: await readFile(path),
  };
}

/**
 * `request --installation ID --record RECORD_ID [--document FILE]`: asks the service for a report on a company
 * that has none; prints the submission id on stdout. Needs a key with the `write` scope.
 */
export async function requestCommand(argv: string[], io: CommandIo): Promise<number> {
  const { values } = parseCommandArgs('request', argv, {
    installation: { type: 'string' },
    record: { type: 'string' },
    document: { type: 'string' },
  });
  if (!values.installation || !values.record)
    throw new UsageError('request needs --installation ID and --record RECORD_ID');
  const document = values.document ? await readDocument(values.document) : undefined;
  const ctx = await openContext(io);
  try {
    if (!(await ctx.installations.get(values.installation))) {
      throw new CommandFailedError(
        `no installation ${values.installation}: run \`report-connector status\` to list them`,
      );
    }
    const outcome = await ctx.reportRequests.request(values.installation, values.record, document);
    if (outcome.existing) {
      io.err(
        `Record ${values.record} already waits for the report requested at ${outcome.request.requestedAt}; nothing new was sent.`,
      );
    } else {
      io.err(
        `Report requested for record ${values.record}; the record shows "requested" until it is published.`,
      );
    }
    if (outcome.request.document?.error)
      io.err(`The document was not attached: ${outcome.request.document.error}`);
    io.out(outcome.submissionId);
    return 0;
  } catch (err) {
    if (err instanceof ReportWriteScopeError || err instanceof ReportRequestError)
      throw new CommandFailedError(err.message);
    if (err instanceof RequestLockedError)
      throw new CommandFailedError(`${err.message}; try again in a moment`);
    if (err instanceof ReportServiceError)
      throw new CommandFailedError(`the report service refused: ${err.message}`);
    throw err;
  } finally {
    await ctx.close();
  }
}
