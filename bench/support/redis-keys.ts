import { randomBytes } from 'node:crypto';
import { deleteKeysWithPrefix } from '../../src/redis.js';

/** Each bench run works under its own Redis prefix and deletes every key under it at the end. */

export function benchPrefix(name: string): string {
  return `rc-bench-${name}-${randomBytes(4).toString('hex')}`;
}

/** Deletes every key that starts with `${prefix}:`; returns how many were deleted. */
export const deleteKeys = deleteKeysWithPrefix;
