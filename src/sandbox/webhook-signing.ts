import { createHmac } from 'node:crypto';

/**
 * Standard Webhooks signing: HMAC-SHA256 over `id.timestamp.body`, sent as `v1,<base64>`. A `whsec_` secret
 * holds the key in base64 after the prefix; any other string is used as its UTF-8 bytes.
 */

const SECRET_PREFIX = 'whsec_';
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

export class WebhookSecretError extends Error {
  readonly code = 'WEBHOOK_SECRET_INVALID';
  constructor(message: string) {
    super(message);
    this.name = 'WebhookSecretError';
  }
}

export function webhookSigningKey(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) {
    if (secret.length === 0) throw new WebhookSecretError('the webhook secret is empty');
    return Buffer.from(secret, 'utf8');
  }
  const encoded = secret.slice(SECRET_PREFIX.length);
  if (!BASE64.test(encoded) || encoded.length % 4 !== 0) {
    throw new WebhookSecretError(`a ${SECRET_PREFIX} secret must hold base64 after the prefix`);
  }
  return Buffer.from(encoded, 'base64');
}

export function signStandardWebhook(key: Buffer, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}
