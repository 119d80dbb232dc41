import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REDIS_URL } from './redis-url.js';
import { waitFor } from './wait.js';
import { buildWorkerCli, TEST_BUILD_DIR } from './worker-process.js';

/**
 * Another OS process holding record locks through the app's own `lockRecords` (the compiled build the worker
 * tests use), so a test can SIGKILL the holder as a worker dies mid-batch.
 */
export class LockHolderProcess {
  private constructor(
    private readonly child: ChildProcess,
    private readonly exited: Promise<unknown>,
  ) {}

  static async start(
    keys: string[],
    options: { ttlMs?: number; holders?: string } = {},
  ): Promise<LockHolderProcess> {
    await buildWorkerCli();
    const moduleUrl = (path: string) => pathToFileURL(join(TEST_BUILD_DIR, path)).href;
    const script = `
      const { createRedis } = await import(${JSON.stringify(moduleUrl('src/redis.js'))});
      const { lockRecords } = await import(${JSON.stringify(moduleUrl('src/storage/record-locks.js'))});
      const redis = createRedis(${JSON.stringify(REDIS_URL)}, 'worker');
      await lockRecords(redis, ${JSON.stringify(keys)}, ${JSON.stringify(options)});
      console.log('held');
      setInterval(() => {}, 1000);
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const collect = (chunk: Buffer) => {
      out = (out + chunk.toString()).slice(-20_000);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const holder = new LockHolderProcess(child, exited);
    try {
      await waitFor(
        'the holder process to hold the locks',
        () => {
          if (child.exitCode !== null) throw new Error(`the holder exited early: ${out.slice(-2000)}`);
          return out.includes('held') ? true : undefined;
        },
        30_000,
        20,
      );
    } catch (err) {
      await holder.kill();
      throw err;
    }
    return holder;
  }

  /** SIGKILL: no release, no clean-up, as when a worker's machine dies. */
  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }
}
