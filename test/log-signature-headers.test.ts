import { describe, expect, it } from 'vitest';
import { createLogger } from '../src/log.js';

/** Webhook signatures are redacted by header name, whatever the sender calls the header. */
function logged(object: Record<string, unknown>): Record<string, unknown> {
  const lines: string[] = [];
  createLogger('info', { write: (line: string) => void lines.push(line) }).info(object, 'event');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

describe('signature headers in logs', () => {
  it('are redacted at the top and one level down, other headers kept', () => {
    const headers = {
      'x-acme-signature-v3': 'sig-1',
      'webhook-signature': 'v1,sig-2',
      'content-type': 'json',
    };
    const line = logged({ headers, req: { headers: { ...headers }, url: '/webhooks/acme' } });
    expect(line.headers).toEqual({
      'x-acme-signature-v3': '[REDACTED]',
      'webhook-signature': '[REDACTED]',
      'content-type': 'json',
    });
    expect(line.req).toEqual({
      headers: {
        'x-acme-signature-v3': '[REDACTED]',
        'webhook-signature': '[REDACTED]',
        'content-type': 'json',
      },
      url: '/webhooks/acme',
    });
    expect(JSON.stringify(line)).not.toMatch(/sig-1|sig-2/);
  });

  it('leave the logged object itself unchanged', () => {
    const object = { headers: { 'x-acme-signature-v3': 'sig-1' } };
    logged(object);
    expect(object.headers['x-acme-signature-v3']).toBe('sig-1');
  });
});
