import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';

/**
 * A Redis of its own for `demo` and the test suite on a machine where nothing answers at REDIS_URL: a
 * `redis-server` on a free loopback port, keeping nothing on disk, stopped with its owner. Production never
 * starts one: a connector's Redis is the operator's.
 */

/** Where to get Redis, for the one line said when none answers and none is installed. */
export const INSTALL_REDIS_HINT =
  'install Redis (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis) or set REDIS_URL';

/** Whether something at `url` answers PING within `timeoutMs` (no client library: one RESP round trip). */
export function redisAnswers(url: string, timeoutMs = 1_000): Promise<boolean> {
  let host = '127.0.0.1';
  let port = 6379;
  try {
    const u = new URL(url);
    host = u.hostname.replace(/^\[|\]$/g, '') || host;
    port = Number(u.port || 6379);
    if (u.password || u.protocol === 'rediss:') return Promise.resolve(true); // not ours to probe: let the client say
  } catch {
    return Promise.resolve(false);
  }
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (d) => done(d.toString().startsWith('+PONG') || d.toString().startsWith('-NOAUTH')));
  });
}

/** The `redis-server` binary (REDIS_SERVER_BIN or the PATH's), or null when there is none. */
export function redisServerBinary(
  env: Readonly<Record<string, string | undefined>> = process.env,
): string | null {
  const bin = env.REDIS_SERVER_BIN ?? 'redis-server';
  const probe = spawnSync(bin, ['--version'], { stdio: 'ignore' });
  return probe.error || probe.status !== 0 ? null : bin;
}

export interface ThrowawayRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** Starts `bin` on a free port and resolves once it answers. */
export async function startThrowawayRedis(bin: string): Promise<ThrowawayRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'rc-own-redis-'));
  const child: ChildProcess = spawn(
    bin,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore' },
  );
  const url = `redis://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 10_000;
  while (!(await redisAnswers(url, 200))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`${bin} did not start on port ${port}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url, port, stop };
}
