import { createHash } from 'node:crypto';

/**
 * The digest a slug is filed under, in the installation's slug index and the deployment's fan-out: the first 31
 * bits of SHA-1 over the slug's stored (escaped, record-state.ts `escapePart`) form, in decimal. A compact
 * bucket keeps a field that reads as an integer in 4 bytes. It is computed here only: the scripts receive it
 * as an argument, and the fan-out picks a slug's shard from it before any script runs.
 */
export function slugDigest(storedSlug: string): string {
  return String(createHash('sha1').update(storedSlug).digest().readUInt32BE(0) >>> 1);
}
