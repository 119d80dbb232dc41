import { randomBytes } from 'node:crypto';
import type { JsonObject } from './deep-merge.js';
import { SandboxHttpError } from './http-error.js';

export interface SubmissionDocument {
  id: string;
  submission_id: string;
  created_at: string;
  content: JsonObject;
}

export interface Submission {
  id: string;
  status: 'received';
  created_at: string;
  content: JsonObject;
  documents: SubmissionDocument[];
}

/** What the write endpoints create. Their payloads are not published, so any JSON object is accepted. */
export class SubmissionStore {
  private readonly submissions = new Map<string, Submission>();

  create(content: JsonObject): Submission {
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
    const submission = this.submissions.get(submissionId);
    if (!submission) throw new SandboxHttpError(404, 'not_found', `no submission ${submissionId}`);
    const document: SubmissionDocument = {
      id: `doc_${randomBytes(10).toString('hex')}`,
      submission_id: submissionId,
      created_at: new Date().toISOString(),
      content: structuredClone(content),
    };
    submission.documents.push(document);
    return structuredClone(document);
  }

  get(id: string): Submission | undefined {
    const submission = this.submissions.get(id);
    return submission ? structuredClone(submission) : undefined;
  }
}
