import type { RedisClient } from '../../src/redis.js';
import { keysWithPrefix } from './system-state.js';

/**
 * Reads back everything a test run left in Redis under a prefix (every key name and every value of every
 * type), and finds which of a list of secrets occur in it or in any other captured text.
 */

export async function dumpPrefix(redis: RedisClient, prefix: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const key of await keysWithPrefix(redis, prefix)) {
    const type = await redis.type(key);
    let value: unknown;
    switch (type) {
      case 'string':
        value = await redis.get(key);
        break;
      case 'hash':
        value = await redis.hgetall(key);
        break;
      case 'list':
        value = await redis.lrange(key, 0, -1);
        break;
      case 'set':
        value = await redis.smembers(key);
        break;
      case 'zset':
        value = await redis.call('ZRANGE', key, '0', '-1', 'WITHSCORES');
        break;
      case 'stream':
        value = await redis.xrange(key, '-', '+');
        break;
      default:
        value = `(${type})`;
    }
    out.set(key, JSON.stringify(value));
  }
  return out;
}

export interface SecretFound {
  secret: string;
  where: string;
}

/** Each (secret name, place) where the secret's text occurs; JSON escaping is undone before looking. */
export function findSecrets(secrets: Record<string, string>, places: Map<string, string>): SecretFound[] {
  const found: SecretFound[] = [];
  for (const [where, text] of places) {
    const plain = text.replace(/\\\//g, '/').replace(/\\"/g, '"');
    for (const [name, secret] of Object.entries(secrets)) {
      if (secret.length >= 8 && (text.includes(secret) || plain.includes(secret)))
        found.push({ secret: name, where });
    }
  }
  return found;
}
