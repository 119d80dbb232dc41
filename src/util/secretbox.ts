import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM for tokens and API keys at rest. The format carries a version so the key or algorithm can be
 * rotated later: `v1.<iv>.<tag>.<ciphertext>`, each part base64url.
 */

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
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
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
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(associatedData));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString(
        'utf8',
      );
    } catch {
      throw new DecryptionError();
    }
  }
}
