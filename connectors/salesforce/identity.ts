import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

/**
 * What a token response says about who installed: the identity URL `.../id/<orgId>/<userId>` names the org and
 * the integration user, and `signature` (base64 HMAC-SHA256 of `id + issued_at`, keyed by the client secret)
 * proves the identity URL came from Salesforce unchanged.
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
