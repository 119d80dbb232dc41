import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findProjectRoot } from '../../src/util/project-root.js';
import { waitFor } from './wait.js';

/**
 * `report-connector worker` as a separate OS process, the way operators scale out, so a test can SIGKILL it
 * at any moment. The CLI is compiled once per source change into test-artifacts/ of this checkout (not `dist`,
 * which other people build at the same time, and not node_modules, which several checkouts may share through a
 * link); module resolution walks up from there to the project's packages.
 */

const ROOT = findProjectRoot();
export const TEST_BUILD_DIR = join(ROOT, 'test-artifacts', 'worker-build');
const BIN = join(TEST_BUILD_DIR, 'src', 'cli', 'bin.js');

let building: Promise<string> | undefined;

/** Compiles the app (incrementally: a second call with unchanged sources takes a few seconds). */
export function buildWorkerCli(): Promise<string> {
  building ??= new Promise<string>((resolve, reject) => {
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    execFile(
      process.execPath,
      [
        tsc,
        '-p',
        'tsconfig.build.json',
        '--outDir',
        TEST_BUILD_DIR,
        '--incremental',
        '--tsBuildInfoFile',
        join(TEST_BUILD_DIR, '.tsbuildinfo'),
      ],
      { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout) => {
        // Type errors elsewhere in a tree under construction still emit JavaScript; only a missing CLI is fatal.
        if (existsSync(BIN)) resolve(BIN);
        else reject(new Error(`the worker CLI could not be built: ${err?.message ?? ''}\n${stdout}`));
      },
    );
  });
  return building;
}

/** Fresh credentials for a local system whose workers run in other processes (they must share them). */
export function sharedSecretsEnv(): Record<string, string> {
  return {
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    ADMIN_TOKEN: randomBytes(24).toString('base64url'),
  };
}

export { workerEnvFor } from '../../local/system.js';

export interface WorkerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class WorkerProcess {
  private log = '';
  readonly exited: Promise<WorkerExit>;
  private exit: WorkerExit | null = null;

  private constructor(
    private readonly child: ChildProcess,
    onOutput?: (text: string) => void,
  ) {
    child.stderr?.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      onOutput?.(text);
      // Keep the tail only: a long run must not grow the test's memory.
      this.log = (this.log + text).slice(-200_000);
    });
    child.stdout?.resume();
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      }),
    );
  }

  /**
   * Starts `report-connector worker` and resolves once it says it is running. `onOutput` sees all of its
   * stderr (the log), not only the tail `output` keeps.
   */
  static async start(
    bin: string,
    env: Record<string, string>,
    onOutput?: (text: string) => void,
  ): Promise<WorkerProcess> {
    // A working folder of its own, so no `.env` of the developer's leaks into the child.
    const cwd = mkdtempSync(join(tmpdir(), 'rc-worker-'));
    const worker = new WorkerProcess(
      spawn(process.execPath, [bin, 'worker'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] }),
      onOutput,
    );
    try {
      await waitFor(
        'the worker process to report it is running',
        () => {
          if (worker.exit)
            throw new Error(
              `the worker exited early (${JSON.stringify(worker.exit)}): ${worker.log.slice(-2000)}`,
            );
          return worker.log.includes('"worker running"') ? true : undefined;
        },
        30_000,
        50,
      );
    } catch (err) {
      // The caller never gets this process, so it could not stop it: stop it here.
      await worker.kill();
      throw err;
    }
    return worker;
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get running(): boolean {
    return this.exit === null;
  }

  get output(): string {
    return this.log;
  }

  /** SIGKILL: no clean-up at all, as when a machine dies. */
  async kill(): Promise<WorkerExit> {
    if (this.exit) return this.exit;
    this.child.kill('SIGKILL');
    return this.exited;
  }

  /** SIGTERM (finish active jobs), then SIGKILL if it takes longer than `graceMs`. */
  async stop(graceMs = 10_000): Promise<WorkerExit> {
    if (this.exit) return this.exit;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}
