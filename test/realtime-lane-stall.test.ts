import { spawn } from 'node:child_process';
import { Queue, Worker } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { LANE_JOB_LOCKS } from '../src/pipeline/workers.js';
import { createRedis } from '../src/redis.js';
import { findProjectRoot } from '../src/util/project-root.js';
import { redisUnderOwnPrefix } from './support/redis-prefixes.js';
import { REDIS_URL } from './support/redis-url.js';
import { waitFor } from './support/wait.js';

/**
 * Issue 30: while a SIGKILLed worker's realtime job stays active, the next job of its lane (the same id) cannot
 * be added, so every event of the installation waits until BullMQ finds the job stalled. With the backfill's
 * 10 s lock and 5 s check that was up to 15 s after a kill; events sent after the faults must land at p95 under 3 s.
 * A worker in another process takes a realtime job with the lane's settings and is killed; a worker here must
 * get the job within the lock and one stalled check.
 */

const { prefix } = redisUnderOwnPrefix();
const QUEUE = 'realtime';

/** A worker process with the lane's settings whose job never ends, as a worker killed mid-job. */
function startHangingWorker(lane: typeof LANE_JOB_LOCKS.realtime) {
  const script = `
    const { Worker } = await import('bullmq');
    const { Redis } = await import('ioredis');
    const connection = new Redis(${JSON.stringify(REDIS_URL)}, { maxRetriesPerRequest: null });
    new Worker(${JSON.stringify(QUEUE)}, async () => {
      console.log('took');
      await new Promise(() => {});
    }, { connection, prefix: ${JSON.stringify(prefix)}, ...${JSON.stringify(lane)} });
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    cwd: findProjectRoot(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (b: Buffer) => {
    out += b.toString();
  });
  child.stderr.on('data', (b: Buffer) => {
    out += b.toString();
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    took: () =>
      waitFor('the worker process to take the job', () => {
        if (child.exitCode !== null) throw new Error(`the worker process exited: ${out.slice(-2000)}`);
        return out.includes('took') ? true : undefined;
      }),
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

describe("a killed worker's realtime job", () => {
  it('is taken again within the lane’s lock and one stalled check', { timeout: 60_000 }, async () => {
    const lane = LANE_JOB_LOCKS.realtime;
    const connection = createRedis(REDIS_URL, 'worker');
    const queue = new Queue(QUEUE, { connection, prefix });
    const dead = startHangingWorker(lane);
    let worker: Worker | undefined;
    try {
      await queue.add('slug-update', {}, { jobId: 'slugs-lane-urgent' });
      await dead.took();
      await dead.kill();
      const killedAt = Date.now();
      let takenAt = 0;
      worker = new Worker(
        QUEUE,
        async () => {
          takenAt ||= Date.now();
        },
        { connection, prefix, ...lane, maxStalledCount: 10 },
      );
      await waitFor('the job taken again', () => (takenAt > 0 ? true : undefined), 40_000, 50);
      const ms = takenAt - killedAt;
      console.log(`[measured] realtime job taken again ${ms} ms after its worker was killed`);
      // The lock lapses at most lockDuration after the kill; the next check after that finds it.
      expect(ms).toBeLessThanOrEqual(lane.lockDuration + lane.stalledInterval + 1_500);
      // Events sent after the faults land at p95 under 3 s (issue 30): the lane's recovery is about that.
      expect(lane.lockDuration + lane.stalledInterval).toBeLessThanOrEqual(4_000);
    } finally {
      await dead.kill();
      await worker?.close();
      await queue.close();
      connection.disconnect();
    }
  });
});
