import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';

/**
 * `start`'s workers, in a `report-connector worker` process of its own. On one event loop, every
 * webhook acknowledgement waited behind whatever job work was running (a fan-out, a batch's planning, the
 * metrics): under a storm the ingest fell to half a bare server's with a p99 five times its. Two processes
 * share nothing but Redis, as `serve` + `worker` always did; `start` stays one command to run.
 *
 * The child is forked with an IPC channel, the parent's environment and Node flags. The parent stops it with a
 * message rather than a signal: a terminal's Ctrl-C, or a service manager that signals the whole group, also
 * signals the child, and a second signal would end it before its active jobs finish. The channel closing (the
 * parent killed) stops it too, so no worker outlives its `start`. A child that dies on its own is started
 * again, unless it keeps dying: then `start` stops with an error and the service manager restarts the whole.
 */

/** Set in the child's environment: it is a `start`'s worker and listens to its parent. */
export const START_CHILD_ENV = 'REPORT_CONNECTOR_START_CHILD';
/** The message that asks the child to finish its active jobs and exit. */
export const STOP_MESSAGE = 'stop';

const RESTART_DELAY_MS = 1_000;
/** More exits than this within RESTART_WINDOW_MS: the child cannot run, and `start` gives up. */
const MAX_RESTARTS = 5;
const RESTART_WINDOW_MS = 60_000;

/** The CLI's entry file beside this one: compiled (`.js`) or, under a TypeScript loader, the source. */
function cliEntry(): string {
  const self = import.meta.url;
  return fileURLToPath(new URL(self.endsWith('.ts') ? '../bin.ts' : '../bin.js', self));
}

export class WorkerChild {
  private child: ChildProcess | undefined;
  private stopping = false;
  private readonly exits: number[] = [];
  private restartTimer: NodeJS.Timeout | undefined;
  private exited: Promise<void> = Promise.resolve();
  /** Resolves when the child cannot be kept running (the caller stops `start`). */
  readonly failed: Promise<string>;
  private fail: (reason: string) => void = () => undefined;

  constructor(
    private readonly env: NodeJS.ProcessEnv,
    private readonly logger: Logger,
  ) {
    this.failed = new Promise((resolve) => {
      this.fail = resolve;
    });
  }

  start(): void {
    const child = fork(cliEntry(), ['worker'], {
      env: { ...this.env, [START_CHILD_ENV]: '1' },
      execArgv: process.execArgv,
      stdio: 'inherit',
    });
    this.child = child;
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        resolve();
        if (this.stopping) return;
        this.onUnexpectedExit(code, signal);
      });
    });
    this.logger.info({ workerPid: child.pid }, 'workers started in their own process');
  }

  private onUnexpectedExit(code: number | null, signal: NodeJS.Signals | null): void {
    const now = Date.now();
    this.exits.push(now);
    while (this.exits.length > 0 && this.exits[0]! < now - RESTART_WINDOW_MS) this.exits.shift();
    if (this.exits.length > MAX_RESTARTS) {
      this.fail(
        `the worker process exited ${this.exits.length} times within a minute (last: ${code ?? signal})`,
      );
      return;
    }
    this.logger.error({ code, signal }, 'the worker process exited; starting it again');
    this.restartTimer = setTimeout(() => {
      if (!this.stopping) this.start();
    }, RESTART_DELAY_MS);
  }

  /** Asks the child to finish its active jobs, and waits for it; SIGKILL after `graceMs`. */
  async stop(graceMs = 60_000): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    if (child.connected) child.send(STOP_MESSAGE);
    else child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    try {
      await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * In a `start`'s worker: resolves when the parent asks it to stop or is gone. Never resolves in any other
 * process (a worker run on its own, or a test runner's child with an IPC channel of its own).
 */
export function untilParentStops(env: NodeJS.ProcessEnv): Promise<void> {
  if (env[START_CHILD_ENV] !== '1' || !process.send) return new Promise(() => undefined);
  return new Promise((resolve) => {
    const done = () => {
      process.off('message', onMessage);
      process.off('disconnect', done);
      resolve();
    };
    const onMessage = (message: unknown) => {
      if (message === STOP_MESSAGE) done();
    };
    process.on('message', onMessage);
    process.once('disconnect', done);
  });
}

/** Closes a `start`'s worker's channel to its parent, so nothing holds the process open once it is done. */
export function leaveParent(env: NodeJS.ProcessEnv): void {
  if (env[START_CHILD_ENV] === '1' && process.connected) process.disconnect();
}
