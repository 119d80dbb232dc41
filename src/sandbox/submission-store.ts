import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { JsonObject } from './deep-merge.js';
import { SandboxHttpError } from './http-error.js';

/**
 * What the write endpoints create. The interface does not publish their payloads, so the sandbox asks for the
 * least a real service plausibly needs: a submission names the organisation; a document is a file (multipart)
 * or a JSON description of one. Unknown fields are kept, never refused.
 */

const text = (max: number) => z.string().trim().min(1).max(max);

export const submissionContentSchema = z.looseObject({
  name: text(200),
  domain: text(253).optional(),
  country: text(100).optional(),
  city: text(100).optional(),
  industry: text(200).optional(),
  reference: text(200).optional(),
});
export type SubmissionContent = z.infer<typeof submissionContentSchema>;

/** A file part as it arrived; the sandbox keeps its fingerprint, not its bytes. */
export interface UploadedFile {
  filename: string;
  contentType: string;
  bytes: Uint8Array;
}

export interface SubmissionDocument {
  id: string;
  submission_id: string;
  created_at: string;
  /** For a multipart upload: name, type, size and sha256 of the file; for a JSON body: the body. */
  content: JsonObject;
}

export type SubmissionStatus = 'received' | 'published';

export interface Submission {
  id: string;
  status: SubmissionStatus;
  created_at: string;
  content: SubmissionContent;
  documents: SubmissionDocument[];
  /** The report published for it, once `/__sandbox/submissions/:id/publish` ran. */
  slug?: string;
}

export function parseSubmissionContent(body: unknown): SubmissionContent {
  const parsed = submissionContentSchema.safeParse(body);
  if (!parsed.success) throw new SandboxHttpError(400, 'invalid_body', z.prettifyError(parsed.error));
  return parsed.data;
}

export class SubmissionStore {
  private readonly submissions = new Map<string, Submission>();

  create(content: SubmissionContent): Submission {
    const submission: Submission = {
      id: `sub_${randomBytes(10).toString('hex')}`,
      status: 'received',
      created_at: new Date().toISOString(),
      content: structuredClone(content),
      documents: [],
    };
    this.submissions.set(submission.id, submission);
    return structuredClone(submission);
  }

  addDocument(submissionId: string, content: JsonObject): SubmissionDocument {
    const submission = this.require(submissionId);
    const document: SubmissionDocument = {
      id: `doc_${randomBytes(10).toString('hex')}`,
      submission_id: submissionId,
      created_at: new Date().toISOString(),
      content: structuredClone(content),
    };
    submission.documents.push(document);
    return structuredClone(document);
  }

  addFile(submissionId: string, file: UploadedFile): SubmissionDocument {
    return this.addDocument(submissionId, {
      filename: file.filename,
      content_type: file.contentType,
      size: file.bytes.byteLength,
      sha256: createHash('sha256').update(file.bytes).digest('hex'),
    });
  }

  markPublished(submissionId: string, slug: string): Submission {
    const submission = this.require(submissionId);
    submission.status = 'published';
    submission.slug = slug;
    return structuredClone(submission);
  }

  get(id: string): Submission | undefined {
    const submission = this.submissions.get(id);
    return submission ? structuredClone(submission) : undefined;
  }

  list(): Submission[] {
    return [...this.submissions.values()].map((s) => structuredClone(s));
  }

  private require(id: string): Submission {
    const submission = this.submissions.get(id);
    if (!submission) throw new SandboxHttpError(404, 'not_found', `no submission ${id}`);
    return submission;
  }
}
