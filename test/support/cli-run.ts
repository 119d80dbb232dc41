import { type LocalSystem, workerEnvFor } from '../../local/system.js';
import type { CommandIo } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';

/** What a command run in this process printed, line by line, with nothing waiting for a signal. */
export function capturedIo(env: NodeJS.ProcessEnv): CommandIo & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return {
    stdout,
    stderr,
    out: (t) => stdout.push(t),
    err: (t) => stderr.push(t),
    env,
    isTTY: false,
    untilStopped: () => Promise.resolve(),
  };
}

export interface CliOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI against `system` as an operator's shell beside its workers would (logs silent unless `env` says). */
export async function runCliOn(
  system: LocalSystem,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<CliOutcome> {
  const io = capturedIo({ ...workerEnvFor(system), LOG_LEVEL: 'silent', ...env });
  const code = await main(args, io);
  return { code, stdout: io.stdout.join('\n'), stderr: io.stderr.join('\n') };
}
