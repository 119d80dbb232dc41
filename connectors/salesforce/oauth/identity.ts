import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { redactSecrets } from '../../../src/log.js';
import { requireSalesforceHost, type SalesforceHostPolicy } from '../hosts.js';
import { fetchBounded, SalesforceAnswerError } from './bounded-http.js';

/**
 * What a token response says about who installed: the identity URL `.../id/<orgId>/<userId>` names the org and
 * the integration user, and `signature` (base64 HMAC-SHA256 of `id + issued_at`, keyed by the client secret)
 * proves the identity URL came from the token endpoint unchanged. Neither proves that the token endpoint was
 * Salesforce's or that the token belongs to that org: a server that was given the consumer secret can sign any
 * `id`. So the org is taken from Salesforce's identity service, asked with the token itself (`confirmIdentity`),
 * at an identity URL that must be a Salesforce host.
 */

export const tokenResponseSchema = z.object({
  access_token: z.string().min(1),
  refresh_token: z.string().min(1).optional(),
  instance_url: z.url(),
  id: z.url(),
  issued_at: z.string().optional(),
  signature: z.string().optional(),
  scope: z.string().optional(),
  token_type: z.string().optional(),
});
export type SalesforceTokenResponse = z.infer<typeof tokenResponseSchema>;

export interface SalesforceIdentity {
  orgId: string;
  userId: string;
}

export function parseIdentityUrl(idUrl: string): SalesforceIdentity {
  const m = /\/id\/([a-zA-Z0-9]{15,18})\/([a-zA-Z0-9]{15,18})\/?$/.exec(new URL(idUrl).pathname);
  if (!m) throw new Error(`not a Salesforce identity URL: ${idUrl}`);
  return { orgId: m[1]!, userId: m[2]! };
}

/** True when the signature matches; false when it is missing or does not. */
export function verifyTokenSignature(response: SalesforceTokenResponse, clientSecret: string): boolean {
  if (!response.signature || !response.issued_at) return false;
  const expected = createHmac('sha256', clientSecret)
    .update(response.id + response.issued_at)
    .digest();
  const given = Buffer.from(response.signature, 'base64');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** What the identity service answers, of what the install needs. */
const identityAnswerSchema = z.object({
  organization_id: z.string().regex(/^[a-zA-Z0-9]{15,18}$/),
  user_id: z.string().regex(/^[a-zA-Z0-9]{15,18}$/),
});

export class IdentityNotConfirmedError extends Error {
  readonly code = 'SALESFORCE_IDENTITY_NOT_CONFIRMED';
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'IdentityNotConfirmedError';
  }
}

/** Salesforce ids compare on their first 15 characters (the 18-character form adds a case checksum). */
function sameId(a: string, b: string): boolean {
  return a.slice(0, 15) === b.slice(0, 15);
}

/**
 * Asks the identity URL, with the access token, which org and user the token belongs to, and checks that they are
 * the ones the URL names. The URL must be a Salesforce host (else SalesforceHostRefusedError); no redirect is
 * followed and the answer is capped (bounded-http.ts). Throws IdentityNotConfirmedError when the service refuses
 * the token or names another org or user.
 */
export async function confirmIdentity(
  idUrl: string,
  accessToken: string,
  policy: SalesforceHostPolicy,
  signal: AbortSignal = AbortSignal.timeout(20_000),
): Promise<SalesforceIdentity> {
  requireSalesforceHost(idUrl, policy, 'identity URL');
  const named = parseIdentityUrl(idUrl);
  let answer: Awaited<ReturnType<typeof fetchBounded>>;
  try {
    answer = await fetchBounded(
      idUrl,
      { headers: { Authorization: `Bearer ${accessToken}`, Accept: 'application/json' }, signal },
      'the Salesforce identity URL',
    );
  } catch (err) {
    if (err instanceof SalesforceAnswerError) throw err;
    throw new IdentityNotConfirmedError(
      `the Salesforce identity URL could not be reached: ${redactSecrets(String(err))}`,
      { cause: err },
    );
  }
  if (!answer.ok) {
    throw new IdentityNotConfirmedError(`the Salesforce identity URL refused the token (${answer.status})`);
  }
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    body = undefined;
  }
  const parsed = identityAnswerSchema.safeParse(body);
  if (!parsed.success) {
    throw new IdentityNotConfirmedError('the Salesforce identity URL did not answer with an org and a user');
  }
  const { organization_id: orgId, user_id: userId } = parsed.data;
  if (!sameId(orgId, named.orgId) || !sameId(userId, named.userId)) {
    throw new IdentityNotConfirmedError(
      `the token belongs to org ${orgId}, not to the org ${named.orgId} its token answer named`,
    );
  }
  return { orgId: named.orgId, userId: named.userId };
}
