import { createHash, randomBytes } from 'node:crypto';

/**
 * PKCE for the web server flow (RFC 7636): the verifier is 43 to 128 characters of the unreserved set
 * (`A-Z a-z 0-9 - . _ ~`), the challenge its SHA-256 in base64url without padding, sent with
 * `code_challenge_method=S256`. 64 random bytes in base64url make an 86-character verifier of that set.
 */

export const PKCE_METHOD = 'S256';
export const PKCE_VERIFIER_BYTES = 64;

export interface PkcePair {
  verifier: string;
  challenge: string;
  method: typeof PKCE_METHOD;
}

export function pkceChallenge(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

export function createPkcePair(): PkcePair {
  const verifier = randomBytes(PKCE_VERIFIER_BYTES).toString('base64url');
  return { verifier, challenge: pkceChallenge(verifier), method: PKCE_METHOD };
}
