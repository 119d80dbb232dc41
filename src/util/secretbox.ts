import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM for tokens and API keys at rest. The format carries a version so the key or algorithm can be
 * rotated later: `v1.<iv>.<tag>.<ciphertext>`, each part base64url.
 */

/** GCM tags are 16 bytes here; a shorter tag would be checked on fewer bytes, so only the full length opens. */
const TAG_BYTES = 16;

export class DecryptionError extends Error {
  readonly code = 'DECRYPTION_FAILED';
  constructor(message = 'stored secret could not be decrypted (wrong ENCRYPTION_KEY or tampered data)') {
    super(message);
    this.name = 'DecryptionError';
  }
}

export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('SecretBox needs a 32-byte key');
  }

  seal(plaintext: string, associatedData = ''): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(associatedData));
    const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [
      'v1',
      iv.toString('base64url'),
      cipher.getAuthTag().toString('base64url'),
      ct.toString('base64url'),
    ].join('.');
  }

  /** `associatedData` binds a secret to its owner: a sealed value copied to another installation fails. */
  open(sealed: string, associatedData = ''): string {
    const parts = sealed.split('.');
    if (parts.length !== 4 || parts[0] !== 'v1')
      throw new DecryptionError('stored secret has an unknown format');
    const [, iv, tag, ct] = parts as [string, string, string, string];
    const tagBytes = Buffer.from(tag, 'base64url');
    if (tagBytes.length !== TAG_BYTES)
      throw new DecryptionError('stored secret has a tag of the wrong length');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'), {
        authTagLength: TAG_BYTES,
      });
      decipher.setAAD(Buffer.from(associatedData));
      decipher.setAuthTag(tagBytes);
      return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString(
        'utf8',
      );
    } catch {
      throw new DecryptionError();
    }
  }
}
