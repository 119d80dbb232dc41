import { AdminRequestError } from './errors.js';

/**
 * body-parser's failures (bad JSON, too large, wrong charset) carry `type` and a 4xx `status`; they are the
 * client's fault and are answered as such instead of as a 500.
 */
export function bodyError(err: unknown): AdminRequestError | null {
  if (!err || typeof err !== 'object' || !('type' in err) || typeof err.type !== 'string') return null;
  const status = 'status' in err && typeof err.status === 'number' ? err.status : 400;
  if (status < 400 || status >= 500) return null;
  switch (err.type) {
    case 'entity.parse.failed':
      return new AdminRequestError(400, 'BAD_JSON', 'The request body is not valid JSON.');
    case 'entity.too.large':
      return new AdminRequestError(413, 'BODY_TOO_LARGE', 'The request body is too large.');
    default:
      return new AdminRequestError(status, 'BAD_BODY', `The request body could not be read (${err.type}).`);
  }
}
