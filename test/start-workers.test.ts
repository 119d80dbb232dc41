import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeRedis, createRedis, deleteByPattern } from '../src/redis.js';
import { freePort } from '../src/util/free-port.js';
import { REDIS_URL } from './support/redis-url.js';
import { waitFor } from './support/wait.js';
import { buildWorkerCli } from './support/worker-process.js';

/**
 * `start` runs its workers in a child `worker` process (issue 30): the HTTP server's event loop carries no job
 * work. The child stops with it, leaves when it is killed, and comes back when it dies alone.
 */

const prefix = `rc-test-${randomUUID().slice(0, 8)}`;
let bin: string;

beforeAll(async () => {
  bin = await buildWorkerCli();
}, 240_000);

afterAll(async () => {
  const r = createRedis(REDIS_URL, 'worker');
  await deleteByPattern(r, `${prefix}*`);
  await closeRedis(r);
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

interface Started {
  child: ChildProcess;
  port: number;
  output: () => string;
  exited: Promise<number | null>;
}

async function startCli(args: string[], name: string): Promise<Started> {
  const port = await freePort();
  const env = {
    PATH: process.env.PATH ?? '',
    REDIS_URL,
    REDIS_PREFIX: `${prefix}-${name}`,
    REPORTS_API_URL: 'http://127.0.0.1:9/api',
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    ADMIN_TOKEN: 'a-long-admin-token-for-tests',
    PORT: String(port),
    APP_URL: `http://127.0.0.1:${port}`,
    LOG_LEVEL: 'info',
  };
  const cwd = mkdtempSync(join(tmpdir(), 'rc-start-'));
  const child = spawn(process.execPath, [bin, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const keep = (d: Buffer) => {
    log += d.toString();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, port, output: () => log, exited };
}

/**
 * Ready as an operator's probe says (the server answers and Redis with it; readiness does not wait for workers),
 * and `start` has logged the pids of `workers` worker processes (none with `--one-process`).
 */
async function ready(s: Started, workers = 1): Promise<void> {
  await waitFor(
    'readyz to answer 200 and the worker process to be logged',
    async () => {
      if (s.child.exitCode !== null) throw new Error(`exited early: ${s.output().slice(-2000)}`);
      if (workerPids(s).length < workers) return undefined;
      try {
        return (await fetch(`http://127.0.0.1:${s.port}/readyz`)).status === 200 ? true : undefined;
      } catch {
        return undefined;
      }
    },
    60_000,
    100,
  );
}

/** The pids `start` logged for its worker processes, in order. */
function workerPids(s: Started): number[] {
  return [...s.output().matchAll(/"workerPid":(\d+)[^\n]*workers started in their own process/g)].map((m) =>
    Number(m[1]),
  );
}

describe('start', () => {
  it('runs its workers in a child process, and stops it when asked to stop', async () => {
    const s = await startCli(['start'], 'term');
    try {
      await ready(s);
      const [workerPid] = workerPids(s);
      expect(workerPid).toBeGreaterThan(0);
      expect(workerPid).not.toBe(s.child.pid);
      expect(alive(workerPid!)).toBe(true);
      // The child logs that it runs once its workers are connected.
      await waitFor('the child to log that it runs', () =>
        s.output().includes('"worker running"') ? true : undefined,
      );
      s.child.kill('SIGTERM');
      expect(await s.exited).toBe(0);
      // The parent waits for its worker: once it has exited, so has the child.
      expect(alive(workerPid!)).toBe(false);
    } finally {
      s.child.kill('SIGKILL');
    }
  }, 120_000);

  it('starts the worker again when it dies alone; the worker leaves when start is killed', async () => {
    const s = await startCli(['start'], 'kill');
    try {
      await ready(s);
      const [first] = workerPids(s);
      process.kill(first!, 'SIGKILL');
      await waitFor(
        'a second worker',
        async () => (workerPids(s).length >= 2 ? true : undefined),
        30_000,
        50,
      );
      const second = workerPids(s)[1]!;
      await ready(s, 2);
      expect(alive(second)).toBe(true);
      s.child.kill('SIGKILL');
      await s.exited;
      // No worker outlives its start: the closed channel stops it.
      await waitFor(
        'the orphaned worker to exit',
        async () => (alive(second) ? undefined : true),
        30_000,
        50,
      );
    } finally {
      s.child.kill('SIGKILL');
    }
  }, 120_000);

  it('--one-process keeps the workers in its own process', async () => {
    const s = await startCli(['start', '--one-process'], 'one');
    try {
      await ready(s, 0);
      expect(workerPids(s)).toEqual([]);
      s.child.kill('SIGTERM');
      expect(await s.exited).toBe(0);
    } finally {
      s.child.kill('SIGKILL');
    }
  }, 120_000);
});
