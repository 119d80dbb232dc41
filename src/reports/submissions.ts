import { randomBytes } from 'node:crypto';
import { z } from 'zod';

/**
 * The write endpoints' payloads, in one place. The interface does not publish them, so the connector sends
 * the plainest shapes a service could take: a flat JSON object for the submission, a multipart form with one
 * `file` part for a document. It accepts any 2xx whose body carries an id, at the top level or under `data`
 * or `submission`, and keeps the whole answer, since nothing else about it is promised.
 */

/** What the CRM knows about the company; `reference` is the CRM record's id, so the service can quote it. */
export const submissionInputSchema = z.object({
  name: z.string().trim().min(1),
  domain: z.string().trim().min(1).optional(),
  country: z.string().trim().min(1).optional(),
  city: z.string().trim().min(1).optional(),
  industry: z.string().trim().min(1).optional(),
  reference: z.string().trim().min(1),
});
export type SubmissionInput = z.infer<typeof submissionInputSchema>;

export interface DocumentInput {
  filename: string;
  contentType: string;
  bytes: Uint8Array;
}

export interface WriteReceipt {
  /** The id the service gave, as text. */
  id: string;
  /** The answer as it came, for the record. */
  answer: unknown;
}

/** The JSON body of `POST /v1/submissions`: only the fields that have a value. */
export function submissionBody(input: SubmissionInput): Record<string, string> {
  const parsed = submissionInputSchema.parse(input);
  const body: Record<string, string> = {};
  for (const [field, value] of Object.entries(parsed)) if (value !== undefined) body[field] = value;
  return body;
}

/** A request body written as it is sent, and its type; `stream` makes a fresh one for each attempt. */
export interface StreamedBody {
  contentType: string;
  /** Bytes in all, for `Content-Length`. */
  length: number;
  stream(): ReadableStream<Uint8Array>;
}

/** Pieces of the file handed to the connection at a time: views into the document, never copies. */
const PIECE_BYTES = 64 * 1024;

/**
 * The multipart body of `POST /v1/submissions/:id/documents`: one `file` part. Written around the document's
 * own bytes (the part's head, views of the file, the closing line), so sending a 10 MB document costs no second
 * copy of it. The filename is the one the connector chose (checkedDocument), never a client's as given.
 */
export function documentBody(document: DocumentInput): StreamedBody {
  const boundary = `----report-connector-${randomBytes(12).toString('hex')}`;
  const encoder = new TextEncoder();
  const head = encoder.encode(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${quotedFilename(document.filename)}"\r\nContent-Type: ${document.contentType || 'application/octet-stream'}\r\n\r\n`,
  );
  const tail = encoder.encode(`\r\n--${boundary}--\r\n`);
  const { bytes } = document;
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    length: head.byteLength + bytes.byteLength + tail.byteLength,
    stream: () => {
      let offset = -1;
      return new ReadableStream<Uint8Array>({
        pull(controller) {
          if (offset < 0) {
            controller.enqueue(head);
            offset = 0;
          } else if (offset < bytes.byteLength) {
            const end = Math.min(offset + PIECE_BYTES, bytes.byteLength);
            controller.enqueue(bytes.subarray(offset, end));
            offset = end;
          } else {
            controller.enqueue(tail);
            controller.close();
          }
        },
      });
    },
  };
}

/** A filename as a quoted multipart parameter: quotes, backslashes and line breaks cannot end it early. */
function quotedFilename(name: string): string {
  return name.replace(/["\\\r\n]/g, '_');
}

const idSchema = z.union([z.string().min(1), z.number().int()]).transform(String);
const withId = z.object({ id: idSchema }).loose();

/** The id in a write answer: `{id}`, `{data: {id}}` or `{submission: {id}}`; undefined when none is there. */
export function receiptId(answer: unknown): string | undefined {
  const top = withId.safeParse(answer);
  if (top.success) return top.data.id;
  if (typeof answer !== 'object' || answer === null) return undefined;
  for (const key of ['data', 'submission'] as const) {
    const inner = withId.safeParse((answer as Record<string, unknown>)[key]);
    if (inner.success) return inner.data.id;
  }
  return undefined;
}
