import { createHmac, timingSafeEqual } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

/**
 * Verifies inbound report-service deliveries on the raw body, before anything else is looked at. Several
 * secrets may be configured at once (comma-separated) so a secret can be rotated with no downtime: a delivery
 * passes when any secret verifies it.
 */

export type SignatureFailure =
  | 'not_configured'
  | 'missing_headers'
  | 'bad_timestamp'
  | 'timestamp_too_old'
  | 'timestamp_too_new'
  | 'bad_signature';

export class WebhookSignatureError extends Error {
  readonly code = 'WEBHOOK_SIGNATURE_INVALID';
  constructor(readonly reason: SignatureFailure) {
    super(`webhook refused: ${reason.replace(/_/g, ' ')}`);
    this.name = 'WebhookSignatureError';
  }
}

export type Headers = Record<string, string | string[] | undefined>;

function header(headers: Headers, name: string): string | undefined {
  const v = headers[name] ?? headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

/** `whsec_` + base64 is the Standard Webhooks form; any other string is used as its UTF-8 bytes. */
export function standardKey(secret: string): Uint8Array {
  return secret.startsWith('whsec_')
    ? Buffer.from(secret.slice('whsec_'.length), 'base64')
    : Buffer.from(secret, 'utf8');
}

export interface StandardVerified {
  id: string;
  timestamp: number;
}

/** One verifier per configured secret: decoding the key on every delivery is measurable in a storm. */
const verifiers = new Map<string, Webhook>();
function verifierFor(secret: string): Webhook {
  let verifier = verifiers.get(secret);
  if (!verifier) {
    verifier = new Webhook(standardKey(secret), { format: 'raw' });
    verifiers.set(secret, verifier);
  }
  return verifier;
}

/** Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature` (`v1,<base64>`, space separated). */
export function verifyStandard(secrets: string[], headers: Headers, rawBody: Buffer): StandardVerified {
  if (secrets.length === 0) throw new WebhookSignatureError('not_configured');
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signature = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signature) throw new WebhookSignatureError('missing_headers');
  const plain = { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature };
  let failure: SignatureFailure = 'bad_signature';
  for (const secret of secrets) {
    try {
      verifierFor(secret).verify(rawBody, plain, { jsonParse: false });
      return { id, timestamp: Number(timestamp) };
    } catch (err) {
      if (!(err instanceof WebhookVerificationError)) throw err;
      failure = reasonOf(err.message);
      // The timestamp is the same for every secret: no point trying the others.
      if (failure !== 'bad_signature') break;
    }
  }
  throw new WebhookSignatureError(failure);
}

function reasonOf(message: string): SignatureFailure {
  if (/too old/i.test(message)) return 'timestamp_too_old';
  if (/too new/i.test(message)) return 'timestamp_too_new';
  if (/invalid signature headers/i.test(message)) return 'bad_timestamp';
  if (/missing/i.test(message)) return 'missing_headers';
  return 'bad_signature';
}

/** One header holding the hex HMAC-SHA256 of the raw body (`sha256=` prefix allowed); key = secret's UTF-8. */
export function verifyHex(secrets: string[], headers: Headers, headerName: string, rawBody: Buffer): void {
  if (secrets.length === 0) throw new WebhookSignatureError('not_configured');
  const given = header(headers, headerName.toLowerCase())?.trim();
  if (!given) throw new WebhookSignatureError('missing_headers');
  const hex = given.toLowerCase().startsWith('sha256=') ? given.slice('sha256='.length) : given;
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new WebhookSignatureError('bad_signature');
  const givenBytes = Buffer.from(hex, 'hex');
  let ok = false;
  for (const secret of secrets) {
    const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(rawBody).digest();
    // Every secret is compared, so the time taken does not tell which one matched.
    if (expected.length === givenBytes.length && timingSafeEqual(expected, givenBytes)) ok = true;
  }
  if (!ok) throw new WebhookSignatureError('bad_signature');
}
