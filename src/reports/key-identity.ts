import { createHash } from 'node:crypto';

/**
 * A report key at an address, by a digest that does not reveal the key: what the report cache is partitioned
 * by (pipeline/report-reader.ts), so a sandbox key's fixtures never answer a live key and a revoked key never
 * reads another key's answers. Two installations sharing one key share it, as they share the key's answers.
 */
export function reportKeyIdentity(baseUrl: string, apiKey: string): string {
  return createHash('sha256').update(`${baseUrl}\n${apiKey}`).digest('hex').slice(0, 16);
}
