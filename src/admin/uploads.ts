import express, { type Request, type RequestHandler } from 'express';
import type { DocumentInput } from '../reports/submissions.js';
import { MAX_REQUEST_DOCUMENT_BYTES } from '../requests/report-requests.js';
import { AdminRequestError } from './errors.js';

/**
 * The "Request a report" form sends a file, so it is multipart. The platform's own FormData reader parses it
 * (no multipart library); the raw body is capped a little above the document limit, for the form's other
 * fields and the part headers.
 */

export const readMultipartBody: RequestHandler = express.raw({
  type: 'multipart/form-data',
  limit: MAX_REQUEST_DOCUMENT_BYTES + 64 * 1024,
});

export interface UploadForm {
  fields: Record<string, string>;
  /** The file in `fileField`, when one was chosen (browsers send an empty part when none was). */
  file: DocumentInput | null;
}

export async function readUploadForm(req: Request, fileField: string): Promise<UploadForm> {
  const raw: unknown = req.body;
  if (!Buffer.isBuffer(raw)) return { fields: {}, file: null };
  let form: FormData;
  try {
    form = await new Response(new Uint8Array(raw), {
      headers: { 'content-type': req.get('content-type') ?? '' },
    }).formData();
  } catch {
    throw new AdminRequestError(
      400,
      'BAD_BODY',
      'The form could not be read: send it as multipart/form-data.',
    );
  }
  const fields: Record<string, string> = {};
  let file: DocumentInput | null = null;
  for (const [name, value] of form.entries()) {
    if (typeof value === 'string') {
      fields[name] = value;
    } else if (name === fileField && value.size > 0) {
      file = {
        filename: value.name || 'document',
        contentType: value.type || 'application/octet-stream',
        bytes: new Uint8Array(await value.arrayBuffer()),
      };
    }
  }
  return { fields, file };
}
