import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { RedisClient } from '../../src/redis.js';

/**
 * What a `report-connector worker` process costs, read from outside it: its CPU time and resident memory
 * (Linux /proc), and the commands Redis counted (`INFO commandstats`, Lua scripts' inner commands included).
 */

/** USER_HZ: 100 on every Linux this bench runs on. */
const CLOCK_TICKS = 100;

/** utime + stime of a live process in seconds; NaN when it cannot be read. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at the state, field 3.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

/** Resident set size of a process in bytes, now or (`peak`) its highest so far; NaN when it cannot be read. */
export function rssOf(pid: number, which: 'now' | 'peak' = 'now'): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (which === 'now' ? /VmRSS:\s+(\d+)\s+kB/ : /VmHWM:\s+(\d+)\s+kB/).exec(status)?.[1];
    return kb ? Number(kb) * 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** Calls per command name since the Redis server started. */
export async function commandCalls(redis: RedisClient): Promise<Map<string, number>> {
  const calls = new Map<string, number>();
  for (const line of (await redis.info('commandstats')).split('\n')) {
    const m = /^cmdstat_([^:]+):calls=(\d+)/.exec(line.trim());
    if (m) calls.set(m[1]!, Number(m[2]));
  }
  return calls;
}

/** Calls per second of each command between two readings, the `info` command itself left out. */
export function callRates(
  before: Map<string, number>,
  after: Map<string, number>,
  seconds: number,
): Map<string, number> {
  const rates = new Map<string, number>();
  for (const [name, n] of after) {
    if (name === 'info') continue;
    const delta = n - (before.get(name) ?? 0);
    if (delta > 0) rates.set(name, delta / seconds);
  }
  return rates;
}

export interface WorkerChild {
  child: ChildProcess;
  pid: number;
  log: string;
  spawnedAt: number;
  /** When it logged "worker running". */
  runningAt: number;
}

/** The compiled CLI beside this compiled module (dist/bench/support -> dist/src/cli). */
const CLI_BIN = fileURLToPath(new URL('../../src/cli/bin.js', import.meta.url));

/** `report-connector worker` in a process of its own, once it says it runs. */
export async function startWorker(env: Record<string, string>, cwd: string): Promise<WorkerChild> {
  const spawnedAt = Date.now();
  const child = spawn(process.execPath, [CLI_BIN, 'worker'], {
    cwd,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const worker: WorkerChild = { child, pid: child.pid ?? -1, log: '', spawnedAt, runningAt: Number.NaN };
  child.stderr?.on('data', (chunk: Buffer) => {
    // The tail only: a worker holding 200 streams logs a line for each.
    worker.log = (worker.log + chunk.toString('utf8')).slice(-100_000);
    if (Number.isNaN(worker.runningAt) && worker.log.includes('"worker running"'))
      worker.runningAt = Date.now();
  });
  const deadline = Date.now() + 120_000;
  while (Number.isNaN(worker.runningAt)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stopWorker(worker, 0);
      throw new Error(`a worker did not start: ${worker.log.slice(-2_000)}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return worker;
}

/** SIGTERM (a clean stop gives its change-stream leases back), SIGKILL after `graceMs`. */
export async function stopWorker(worker: WorkerChild, graceMs = 30_000): Promise<void> {
  const { child } = worker;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(graceMs > 0 ? 'SIGTERM' : 'SIGKILL');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}
