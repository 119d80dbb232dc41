import { cpus, loadavg, totalmem } from 'node:os';
import { closeRedis, createRedis } from '../../src/redis.js';

/** One line saying where a bench ran, printed above its tables: results mean little without it. */
export async function describeMachine(redisUrl: string): Promise<string> {
  const redis = createRedis(redisUrl, 'worker', 'rc-bench-info');
  let redisVersion = 'unknown';
  try {
    const info = await redis.info('server');
    redisVersion = /redis_version:(\S+)/.exec(info)?.[1] ?? redisVersion;
  } finally {
    await closeRedis(redis);
  }
  const cores = cpus();
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  return [
    `${cores.length} × ${cores[0]?.model.trim() ?? 'unknown CPU'}`,
    `${(totalmem() / 1024 ** 3).toFixed(0)} GB RAM`,
    `Node ${process.version}`,
    `Redis ${redisVersion} on the same machine`,
    `load average at start ${load}`,
  ].join(', ');
}
