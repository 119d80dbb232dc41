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

/** The multipart body of `POST /v1/submissions/:id/documents`. */
export function documentForm(document: DocumentInput): FormData {
  const form = new FormData();
  // A copy, so the Blob owns plain ArrayBuffer-backed bytes whatever the caller's view sits on.
  const blob = new Blob([new Uint8Array(document.bytes)], {
    type: document.contentType || 'application/octet-stream',
  });
  form.append('file', blob, document.filename);
  return form;
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
