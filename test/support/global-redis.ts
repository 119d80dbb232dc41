import {
  INSTALL_REDIS_HINT,
  redisAnswers,
  redisServerBinary,
  startThrowawayRedis,
} from '../../src/util/throwaway-redis.js';

/**
 * Vitest's global setup: the suite needs a Redis. Nothing answering at REDIS_URL (a fresh machine) with a
 * redis-server installed: one of the suite's own on a free port, for every test file (the forks inherit
 * REDIS_URL), stopped at the end. None installed: one line that says how to get one.
 */
export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  if (await redisAnswers(url)) return undefined;
  const bin = redisServerBinary();
  if (!bin)
    throw new Error(`Nothing answers at ${url} and no redis-server is installed: ${INSTALL_REDIS_HINT}.`);
  const own = await startThrowawayRedis(bin);
  process.env.REDIS_URL = own.url;
  console.log(`Nothing answered at ${url}: the tests use a redis-server of their own at ${own.url}.`);
  return own.stop;
}
