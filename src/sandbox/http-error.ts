/**
 * An error the sandbox answers with. `code` is the machine-readable reason in the error body; `headers` carry
 * what the caller needs to react (for example `Retry-After` on 429).
 */
export class SandboxHttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'SandboxHttpError';
  }
}

/** The sandbox's error body. The interface does not publish one; clients must not depend on this shape. */
export interface ErrorBody {
  error: { code: string; message: string };
  request_id: string;
}

export function errorBody(code: string, message: string, requestId: string): ErrorBody {
  return { error: { code, message }, request_id: requestId };
}
