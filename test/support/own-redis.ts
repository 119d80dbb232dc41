import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from './wait.js';

/**
 * A Redis server of the test's own, on its own port, with append-only persistence flushed on every write, so
 * that killing it with SIGKILL loses nothing it acknowledged, exactly like a production Redis with
 * `appendfsync always`. `REDIS_SERVER_BIN` names the binary when it is not `redis-server` on the PATH.
 * `persistence: 'none'`: nothing on disk (a bench that counts commands and wants no fsync in its figures).
 */
export class OwnRedisServer {
  readonly port: number;
  readonly dir: string;
  private child: ChildProcess | null = null;
  private log = '';

  constructor(
    port = 6390 + Math.floor(Math.random() * 2000),
    private readonly options: { persistence?: 'always' | 'none' } = {},
  ) {
    this.port = port;
    this.dir = mkdtempSync(join(tmpdir(), 'rc-redis-'));
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== null;
  }

  /** Starts (or restarts, reading the append-only file back) and resolves once it accepts connections. */
  async start(): Promise<void> {
    if (this.child) return;
    const bin = process.env.REDIS_SERVER_BIN ?? 'redis-server';
    const durable = (this.options.persistence ?? 'always') === 'always';
    const args = [
      '--port',
      String(this.port),
      '--bind',
      '127.0.0.1',
      '--appendonly',
      durable ? 'yes' : 'no',
      ...(durable ? ['--appendfsync', 'always'] : []),
      '--dir',
      this.dir,
      '--save',
      '',
    ];
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    this.log = '';
    let failed: Error | null = null;
    child.once('error', (err) => {
      failed = new Error(
        `${bin} could not be started (${err.message}): install Redis or set REDIS_SERVER_BIN`,
      );
    });
    child.once('exit', () => {
      if (this.child === child) this.child = null;
    });
    const collect = (chunk: Buffer) => {
      this.log = (this.log + chunk.toString('utf8')).slice(-20_000);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    await waitFor(
      `redis-server on port ${this.port} to accept connections`,
      () => {
        if (failed) throw failed;
        if (this.child !== child) throw new Error(`redis-server exited at start: ${this.log}`);
        return /Ready to accept connections/.test(this.log) ? true : undefined;
      },
      20_000,
      25,
    );
  }

  /** SIGKILL: no shutdown save, no goodbye to clients. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    // A paused process takes SIGKILL too, but say so plainly: it must not stay stopped.
    child.kill('SIGCONT');
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    this.child = null;
  }

  /** SIGSTOP: the process stays, its connections stay open, and nothing is answered (a hung Redis). */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  /** SIGCONT after pause(). */
  resume(): void {
    this.child?.kill('SIGCONT');
  }

  /** Stops for good and removes the data folder. */
  async dispose(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
