import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import {
  signStandardWebhook,
  WebhookSecretError,
  webhookSigningKey,
} from '../src/sandbox/webhook-signing.js';

// The published Standard Webhooks test vector (field notes, "Signed webhooks").
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

describe('Standard Webhooks signing', () => {
  it('the standardwebhooks package used by the conformance test reproduces the published vector', () => {
    const signed = new Webhook(VECTOR.secret).sign(VECTOR.id, new Date(VECTOR.timestamp * 1000), VECTOR.body);
    expect(signed).toBe(VECTOR.signature);
  });

  it('the sandbox signer reproduces the published vector', () => {
    const key = webhookSigningKey(VECTOR.secret);
    expect(signStandardWebhook(key, VECTOR.id, VECTOR.timestamp, VECTOR.body)).toBe(VECTOR.signature);
  });

  it('changes the signature when any signed part changes', () => {
    const key = webhookSigningKey(VECTOR.secret);
    const variants = [
      signStandardWebhook(key, `${VECTOR.id}x`, VECTOR.timestamp, VECTOR.body),
      signStandardWebhook(key, VECTOR.id, VECTOR.timestamp + 1, VECTOR.body),
      signStandardWebhook(key, VECTOR.id, VECTOR.timestamp, `${VECTOR.body} `),
    ];
    for (const v of variants) expect(v).not.toBe(VECTOR.signature);
  });

  it('uses the UTF-8 bytes of a secret without the whsec_ prefix', () => {
    const secret = 'plain sécret';
    const ours = signStandardWebhook(webhookSigningKey(secret), VECTOR.id, VECTOR.timestamp, VECTOR.body);
    const theirs = new Webhook(new TextEncoder().encode(secret), { format: 'raw' }).sign(
      VECTOR.id,
      new Date(VECTOR.timestamp * 1000),
      VECTOR.body,
    );
    expect(ours).toBe(theirs);
  });

  it('refuses a whsec_ secret that is not base64, and an empty secret', () => {
    expect(() => webhookSigningKey('whsec_not base64!')).toThrow(WebhookSecretError);
    expect(() => webhookSigningKey('')).toThrow(WebhookSecretError);
  });
});
