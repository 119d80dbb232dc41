import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { OAuthStateError, OAuthStateStore, oauthStateCookieName } from '../src/auth/oauth-state.js';
import { DecryptionError, SecretBox } from '../src/util/secretbox.js';

/** A sealed value whose GCM tag was cut short would be checked on fewer bytes: it must not open. */

function withTag(sealed: string, cut: (tag: Buffer) => Buffer): string {
  const [version, iv, tag, ct] = sealed.split('.') as [string, string, string, string];
  return [version, iv, cut(Buffer.from(tag, 'base64url')).toString('base64url'), ct].join('.');
}

describe('AES-GCM tag length', () => {
  const box = new SecretBox(randomBytes(32));

  it('a whole tag opens', () => {
    expect(box.open(box.seal('token-value', 'owner'), 'owner')).toBe('token-value');
  });

  it.each([4, 8, 12, 15])('a sealed value with its tag cut to %i bytes does not open', (bytes) => {
    const truncated = withTag(box.seal('token-value', 'owner'), (tag) => tag.subarray(0, bytes));
    expect(() => box.open(truncated, 'owner')).toThrow(DecryptionError);
  });

  it('a tag longer than 16 bytes does not open', () => {
    const padded = withTag(box.seal('token-value', 'owner'), (tag) => Buffer.concat([tag, Buffer.alloc(1)]));
    expect(() => box.open(padded, 'owner')).toThrow(DecryptionError);
  });

  it('the OAuth-state cookie with a truncated tag is refused', () => {
    const store = new OAuthStateStore(randomBytes(32), { secureCookies: false });
    const issued = store.issue('hubspot', { slug: 'x' });
    const name = oauthStateCookieName('hubspot');
    const value = (issued.cookie.split(';')[0] ?? '').slice(name.length + 1);
    expect(store.consume('hubspot', issued.state, `${name}=${value}`)).toEqual({ slug: 'x' });
    const again = store.issue('hubspot', { slug: 'x' });
    const sealed = (again.cookie.split(';')[0] ?? '').slice(name.length + 1);
    const short = withTag(decodeURIComponent(sealed), (tag) => tag.subarray(0, 4));
    expect(() => store.consume('hubspot', again.state, `${name}=${encodeURIComponent(short)}`)).toThrow(
      OAuthStateError,
    );
  });
});
