import { randomBytes } from 'node:crypto';
import type { ReportClient } from './client.js';
import {
  ReportBadRequestError,
  ReportNotFoundError,
  ReportServiceError,
  ReportUnexpectedStatusError,
  ReportWriteScopeError,
} from './errors.js';

/**
 * Whether a report-service key holds the `write` scope, learnt without writing anything. The interface says a
 * call without the scope its endpoint needs answers 403, and publishes no way to list a key's scopes; so a
 * document is sent to a submission id that cannot exist. A key without `write` is refused (403) before the
 * submission is looked for; a key with it gets as far as the lookup (404, or a 400 or 422 about the request).
 */

export type WriteScope =
  | { kind: 'write' }
  | { kind: 'no-write' }
  /** The answer said neither (the service failed, the rate limit, the network): `why` says what happened. */
  | { kind: 'unknown'; why: string };

export async function writeScopeOf(client: ReportClient): Promise<WriteScope> {
  const nowhere = `scope-check-${randomBytes(9).toString('hex')}`;
  try {
    await client.uploadDocument(nowhere, {
      filename: 'scope-check.txt',
      contentType: 'text/plain',
      bytes: new TextEncoder().encode('report-connector doctor: scope check'),
    });
    // Accepted for a submission nobody made: the key could write, whatever the service did with it.
    return { kind: 'write' };
  } catch (err) {
    if (err instanceof ReportWriteScopeError) return { kind: 'no-write' };
    if (err instanceof ReportNotFoundError || err instanceof ReportBadRequestError) return { kind: 'write' };
    if (err instanceof ReportUnexpectedStatusError && (err.status === 409 || err.status === 422))
      return { kind: 'write' };
    return { kind: 'unknown', why: err instanceof ReportServiceError ? err.message : String(err) };
  }
}
