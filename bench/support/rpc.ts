import { type ChildProcess, fork } from 'node:child_process';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A child process that a bench drives over Node's IPC channel: the child is started with a JSON config,
 * answers `ready` once its servers listen, then serves typed calls. Benches use it to keep the services they
 * measure against (local CRM, sandbox) out of the measured process, or to keep the load generator out of the
 * measured server. Every call has a time limit, and a child that dies fails every pending call at once.
 */

/** Operation name -> its argument and result (both must survive JSON). */
export type Protocol = Record<string, { args: unknown; result: unknown }>;

export type Handlers<P extends Protocol> = {
  [K in keyof P]: (args: P[K]['args']) => Promise<P[K]['result']> | P[K]['result'];
};

type Request = { kind: 'call'; id: number; op: string; args: unknown };
type Reply =
  | { kind: 'ready'; info: unknown }
  | { kind: 'failed'; error: string }
  | { kind: 'reply'; id: number; ok: true; result: unknown }
  | { kind: 'reply'; id: number; ok: false; error: string };

export class RpcError extends Error {
  readonly code = 'BENCH_RPC_FAILED';
  constructor(
    readonly op: string,
    message: string,
  ) {
    super(`${op}: ${message}`);
    this.name = 'RpcError';
  }
}

/** The module next to `from` named `name`, with the caller's own extension (.ts from sources, .js built). */
export function siblingModule(from: string, name: string): string {
  const here = fileURLToPath(from);
  return fileURLToPath(new URL(`${name}${extname(here)}`, from));
}

interface Pending {
  op: string;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

export class RpcChild<P extends Protocol, Ready = unknown> {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private exited = false;

  private constructor(
    private readonly child: ChildProcess,
    readonly ready: Ready,
  ) {
    child.on('message', (message: Reply) => {
      if (message.kind !== 'reply') return;
      const entry = this.pending.get(message.id);
      if (!entry) return;
      this.pending.delete(message.id);
      clearTimeout(entry.timer);
      if (message.ok) entry.resolve(message.result);
      else entry.reject(new RpcError(entry.op, message.error));
    });
    child.on('exit', (code, signal) => {
      this.exited = true;
      for (const [id, entry] of this.pending) {
        clearTimeout(entry.timer);
        entry.reject(new RpcError(entry.op, `the child exited (${signal ?? code}) before answering`));
        this.pending.delete(id);
      }
    });
  }

  /** Forks `modulePath` with this process's Node flags (and `nodeFlags`) and waits for its `ready`. */
  static async start<P extends Protocol, Ready>(
    modulePath: string,
    config: unknown,
    options: { timeoutMs?: number; nodeFlags?: string[] } = {},
  ): Promise<RpcChild<P, Ready>> {
    const timeoutMs = options.timeoutMs ?? 120_000;
    const child = fork(modulePath, [JSON.stringify(config)], {
      execArgv: [...process.execArgv, ...(options.nodeFlags ?? [])],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const ready = await new Promise<Ready>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new RpcError('start', `${modulePath} was not ready within ${timeoutMs} ms`));
      }, timeoutMs);
      const onMessage = (message: Reply) => {
        if (message.kind === 'ready') {
          cleanup();
          resolve(message.info as Ready);
        } else if (message.kind === 'failed') {
          cleanup();
          reject(new RpcError('start', message.error));
        }
      };
      const onExit = (code: number | null) => {
        cleanup();
        reject(new RpcError('start', `${modulePath} exited with ${code} before it was ready`));
      };
      const cleanup = () => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
      };
      child.on('message', onMessage);
      child.on('exit', onExit);
    });
    return new RpcChild<P, Ready>(child, ready);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  call<K extends keyof P & string>(op: K, args: P[K]['args'], timeoutMs = 120_000): Promise<P[K]['result']> {
    if (this.exited) return Promise.reject(new RpcError(op, 'the child has exited'));
    const id = this.nextId++;
    return new Promise<P[K]['result']>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new RpcError(op, `no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { op, resolve: resolve as (value: unknown) => void, reject, timer });
      const request: Request = { kind: 'call', id, op, args };
      this.child.send(request);
    });
  }

  /** Asks the child to close its servers and exit; kills it if it has not exited within `timeoutMs`. */
  async stop(timeoutMs = 15_000): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.send({ kind: 'stop' });
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    await exited;
    clearTimeout(timer);
  }
}

/**
 * The child's side: reads its config from argv, runs `start` (which returns what `ready` carries and the
 * handlers), serves calls until the parent says stop, then runs `close` and exits.
 */
export async function serveRpc<P extends Protocol, Config, Ready>(
  start: (config: Config) => Promise<{ ready: Ready; handlers: Handlers<P>; close: () => Promise<void> }>,
): Promise<void> {
  const send = (message: Reply) => process.send?.(message);
  let served: Awaited<ReturnType<typeof start>>;
  try {
    served = await start(JSON.parse(process.argv[2] ?? '{}') as Config);
  } catch (err) {
    send({ kind: 'failed', error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    process.exit(1);
  }
  const { handlers, close } = served;
  const closeAndExit = async () => {
    try {
      await close();
      process.exit(0);
    } catch (err) {
      process.stderr.write(`closing failed: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    }
  };
  process.on('message', async (message: Request | { kind: 'stop' }) => {
    if (message.kind === 'stop') {
      await closeAndExit();
      return;
    }
    if (message.kind !== 'call') return;
    const handler = handlers[message.op as keyof P];
    try {
      if (!handler) throw new Error(`unknown operation ${message.op}`);
      const result = await handler(message.args as P[keyof P]['args']);
      send({ kind: 'reply', id: message.id, ok: true, result });
    } catch (err) {
      send({
        kind: 'reply',
        id: message.id,
        ok: false,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  });
  // The parent died without saying stop: do not linger.
  process.on('disconnect', () => void closeAndExit());
  send({ kind: 'ready', info: served.ready });
}
