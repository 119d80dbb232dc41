import { hash } from 'node:crypto';

/**
 * HMAC-SHA256 (RFC 2104) with the key's pads made once, each MAC two one-shot `crypto.hash` calls. Per event
 * this is about a quarter of the CPU of `createHmac` (which sets up an OpenSSL context each time) and of the
 * standardwebhooks package's JavaScript SHA-256: in a storm of signed events the verify was the largest cost
 * per request after the socket. Checked against `createHmac` in test/webhooks-reports.test.ts.
 */

const BLOCK = 64;

export class HmacSha256 {
  private readonly inner: Buffer;
  private readonly outer: Buffer;

  constructor(key: Uint8Array) {
    const block = Buffer.alloc(BLOCK);
    if (key.length > BLOCK) hash('sha256', key, 'buffer').copy(block);
    else Buffer.from(key).copy(block);
    this.inner = Buffer.alloc(BLOCK);
    this.outer = Buffer.alloc(BLOCK);
    for (let i = 0; i < BLOCK; i++) {
      this.inner[i] = block[i]! ^ 0x36;
      this.outer[i] = block[i]! ^ 0x5c;
    }
  }

  /** The MAC of the parts, in order, as base64. */
  base64(...parts: Buffer[]): string {
    const innerHash = hash('sha256', Buffer.concat([this.inner, ...parts]), 'buffer');
    return hash('sha256', Buffer.concat([this.outer, innerHash]), 'base64');
  }
}
