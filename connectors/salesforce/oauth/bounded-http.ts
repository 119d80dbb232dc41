/**
 * The OAuth calls (token, identity, revoke) go to hosts that were checked (hosts.ts): a redirect would take the
 * request, and with a 307 its form (code, verifier, consumer secret, refresh token), to a host nobody checked,
 * so none is followed and a 3xx is an error. Salesforce's answers to them are small JSON documents: a body past
 * MAX_ANSWER_BYTES is an error too, read no further.
 */

export const MAX_ANSWER_BYTES = 64 * 1024;

export type SalesforceAnswerProblem = 'SALESFORCE_REDIRECT_REFUSED' | 'SALESFORCE_ANSWER_TOO_LARGE';

export class SalesforceAnswerError extends Error {
  constructor(
    readonly code: SalesforceAnswerProblem,
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'SalesforceAnswerError';
  }
}

/** The answer's body as text, `max` bytes at most; throws SalesforceAnswerError past that. */
export async function readCapped(res: Response, what: string, max = MAX_ANSWER_BYTES): Promise<string> {
  const tooLarge = () =>
    new SalesforceAnswerError(
      'SALESFORCE_ANSWER_TOO_LARGE',
      `${what} answered more than ${max} bytes: not read`,
      res.status,
    );
  const declared = Number(res.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > max) {
    await res.body?.cancel().catch(() => {});
    throw tooLarge();
  }
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export interface BoundedAnswer {
  status: number;
  ok: boolean;
  text: string;
}

/**
 * `fetch` without following redirects and with the body read under the cap. A failure to connect is thrown as
 * it comes (the callers word it); a 3xx or an oversized body is a SalesforceAnswerError.
 */
export async function fetchBounded(url: string, init: RequestInit, what: string): Promise<BoundedAnswer> {
  const res = await fetch(url, { ...init, redirect: 'manual' });
  if (res.status >= 300 && res.status < 400) {
    await res.body?.cancel().catch(() => {});
    throw new SalesforceAnswerError(
      'SALESFORCE_REDIRECT_REFUSED',
      `${what} answered ${res.status}, a redirect: redirects are not followed`,
      res.status,
    );
  }
  return { status: res.status, ok: res.ok, text: await readCapped(res, what) };
}
