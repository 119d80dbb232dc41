import { Busboy, type BusboyFileStream, type BusboyInstance } from '@fastify/busboy';
import type { Request, RequestHandler } from 'express';
import { MAX_REQUEST_DOCUMENT_BYTES } from '../app/report-requests.js';
import { checkedDocument, DocumentRefusedError } from '../reports/document-types.js';
import type { DocumentInput } from '../reports/submissions.js';
import { AdminRequestError } from './errors.js';

/**
 * The "Request a report" form sends a file, so it is multipart. It is read as it arrives (@fastify/busboy): the
 * file's bytes are written once into one buffer sized from the request's length, so a 10 MB document costs
 * about 10 MB while it is read and nothing more when it is sent on (documentBody streams views of it). The
 * document is then checked (checkedDocument): empty, or not an allowed type on its bytes, is a 400; its
 * filename is rebuilt from a safe character set.
 */

/** Text fields the forms carry (the CSRF token, `next`), and how long one may be. */
const MAX_FIELDS = 20;
const MAX_FIELD_BYTES = 16 * 1024;

export interface UploadForm {
  fields: Record<string, string>;
  /** The file in `fileField`, when one was chosen (browsers send an empty, unnamed part when none was). */
  file: DocumentInput | null;
}

/** What the reader found in a request, until the route asks for it. */
interface ReadForm {
  fields: Record<string, string>;
  file: { field: string; filename: string; contentType: string; bytes: Uint8Array } | null;
  /** Why the file cannot be taken, found while reading (too large). */
  refusal: AdminRequestError | null;
}

const READ = new WeakMap<Request, ReadForm>();

/**
 * Bytes written into one buffer: sized from the declared length when there is one (the file is most of the
 * body), grown by doubling when the body is longer or has no length.
 */
class ByteSink {
  private buffer: Buffer;
  length = 0;

  constructor(expected: number) {
    this.buffer = Buffer.allocUnsafeSlow(Math.max(expected, 0));
  }

  write(chunk: Buffer): void {
    if (this.length + chunk.byteLength > this.buffer.byteLength) {
      const grown = Buffer.allocUnsafeSlow(
        Math.max(this.length + chunk.byteLength, this.buffer.byteLength * 2, 64 * 1024),
      );
      this.buffer.copy(grown, 0, 0, this.length);
      this.buffer = grown;
    }
    chunk.copy(this.buffer, this.length);
    this.length += chunk.byteLength;
  }

  bytes(): Uint8Array {
    return this.buffer.subarray(0, this.length);
  }
}

function badForm(): AdminRequestError {
  return new AdminRequestError(
    400,
    'BAD_BODY',
    'The form could not be read: send it as multipart/form-data.',
  );
}

function readMultipart(req: Request): Promise<ReadForm> {
  return new Promise((resolve, reject) => {
    let parser: BusboyInstance;
    try {
      parser = new Busboy({
        headers: { ...req.headers, 'content-type': req.get('content-type') ?? '' },
        limits: {
          files: 1,
          fileSize: MAX_REQUEST_DOCUMENT_BYTES,
          fields: MAX_FIELDS,
          fieldSize: MAX_FIELD_BYTES,
          parts: MAX_FIELDS + 1,
        },
      });
    } catch {
      reject(badForm());
      return;
    }
    const form: ReadForm = { fields: {}, file: null, refusal: null };
    const declared = Number(req.get('content-length'));
    const expected =
      Number.isFinite(declared) && declared > 0 ? Math.min(declared, MAX_REQUEST_DOCUMENT_BYTES) : 0;
    parser.on('field', (name: string, value: string) => {
      form.fields[name] = value;
    });
    parser.on(
      'file',
      (field: string, stream: BusboyFileStream, filename: string, _encoding: string, mimeType: string) => {
        const sink = new ByteSink(expected);
        stream.on('data', (chunk: Buffer) => sink.write(chunk));
        stream.on('limit', () => {
          form.refusal = new AdminRequestError(
            400,
            'DOCUMENT_TOO_LARGE',
            `The document is over ${MAX_REQUEST_DOCUMENT_BYTES / 1024 / 1024} MB.`,
          );
        });
        stream.on('end', () => {
          if (form.refusal) return;
          form.file = { field, filename, contentType: mimeType, bytes: sink.bytes() };
        });
      },
    );
    parser.on('error', () => reject(badForm()));
    parser.on('finish', () => resolve(form));
    req.on('error', () => reject(badForm()));
    req.pipe(parser);
  });
}

/** Reads a multipart request as it arrives; any other body is left to the other parsers. */
export const readMultipartBody: RequestHandler = (req, _res, next) => {
  if (!req.is('multipart/form-data')) return next();
  readMultipart(req).then((form) => {
    READ.set(req, form);
    next();
  }, next);
};

/**
 * The form `readMultipartBody` read, with the file in `fileField` checked: an empty file (a chosen file
 * without content) or one of a type not allowed is refused with 400; a part without a filename or content is
 * no file chosen.
 */
export async function readUploadForm(req: Request, fileField: string): Promise<UploadForm> {
  const form = READ.get(req);
  if (!form) return { fields: {}, file: null };
  if (form.refusal) throw form.refusal;
  const part = form.file;
  if (!part || part.field !== fileField) return { fields: form.fields, file: null };
  if (part.filename === '' && part.bytes.byteLength === 0) return { fields: form.fields, file: null };
  try {
    const file = await checkedDocument({
      filename: part.filename || 'document',
      contentType: part.contentType,
      bytes: part.bytes,
    });
    return { fields: form.fields, file };
  } catch (err) {
    if (err instanceof DocumentRefusedError) throw new AdminRequestError(400, err.code, err.message);
    throw err;
  }
}
