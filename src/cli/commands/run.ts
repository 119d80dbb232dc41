import { createServer, type Server } from 'node:http';
import { ensureTokenModeInstallations } from '../../app/bootstrap.js';
import type { AppContext } from '../../app/context.js';
import { schedulePolls } from '../../app/poll-schedules.js';
import { runPendingMigrations } from '../../migrations/runner.js';
import type { PipelineWorkers } from '../../pipeline/workers.js';
import { createServerApp } from '../../server/app.js';
import { parseCommandArgs } from '../args.js';
import { CommandFailedError, UsageError } from '../errors.js';
import type { CommandIo } from '../io.js';
import { openContext } from './context.js';
import { leaveParent, untilParentStops, WorkerChild } from './worker-child.js';

/**
 * `start` (server, and workers in a child `worker` process; `--one-process`: in its own), `serve` (server),
 * `worker` (workers): long-running until SIGINT/SIGTERM.
 */
export async function runCommand(
  kind: 'start' | 'serve' | 'worker',
  argv: string[],
  io: CommandIo,
): Promise<number> {
  const { values } = parseCommandArgs(kind, argv, { 'one-process': { type: 'boolean' } });
  if (values['one-process'] && kind !== 'start')
    throw new UsageError(`${kind}: --one-process is an option of start`);
  const forkWorkers = kind === 'start' && values['one-process'] !== true;
  const stopped = Promise.race([io.untilStopped(), untilParentStops(io.env)]);
  const ctx = await openContext(io, {}, 'always');
  let server: Server | undefined;
  let workers: PipelineWorkers | undefined;
  let child: WorkerChild | undefined;
  try {
    // Every kind, before any worker opens an installation (the job gate reads the approval a step records)
    // and before the token-mode installations are written (a step records theirs as there before).
    await runPendingMigrations(ctx);
    if (kind !== 'worker') {
      await ensureTokenModeInstallations(ctx);
      await schedulePolls(ctx);
      await ctx.schedules.scheduleReconcile(ctx.config.reconcileHours * 3_600_000);
      await ctx.schedules.scheduleScoreChangeSweep();
    }
    if (forkWorkers) {
      child = new WorkerChild(io.env, ctx.logger);
      child.start();
    } else if (kind !== 'serve') workers = await ctx.startWorkers();
    if (kind !== 'worker') server = await listen(ctx, workers);
    ctx.logger.info({ kind, port: kind === 'worker' ? undefined : ctx.config.port }, `${kind} running`);
    const failure = await Promise.race([
      stopped.then(() => null),
      child ? child.failed : new Promise<never>(() => undefined),
    ]);
    if (failure !== null) {
      ctx.logger.error({ reason: failure }, 'stopping: the workers cannot run');
      throw new CommandFailedError(failure);
    }
    ctx.logger.info('stopping: finishing active jobs');
    return 0;
  } finally {
    if (server) await new Promise((r) => server?.close(r));
    await child?.stop();
    await ctx.close();
    leaveParent(io.env);
  }
}

export function listen(ctx: AppContext, workers?: PipelineWorkers): Promise<Server> {
  const server = createServer(createServerApp(ctx, workers ? { workers } : {}));
  return new Promise((resolve, reject) => {
    server.listen(ctx.config.port);
    server.once('listening', () => resolve(server));
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new CommandFailedError(
          err.code === 'EADDRINUSE'
            ? `port ${ctx.config.port} is in use: set PORT to a free port`
            : `cannot listen: ${err.message}`,
        ),
      ),
    );
  });
}
