import { type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
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

export interface SpawnedCli {
  child: ChildProcessByStdio<null, Readable, Readable>;
  /** Everything the process printed so far. */
  output: { stdout: string; stderr: string };
  exited: Promise<number | null>;
}

/** Starts the built CLI `bin` as its own process with exactly `env`, collecting what it prints. */
export function spawnCli(bin: string, args: string[], env: NodeJS.ProcessEnv): SpawnedCli {
  const child = spawn(process.execPath, [bin, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = { stdout: '', stderr: '' };
  child.stdout.on('data', (d: Buffer) => {
    output.stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    output.stderr += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { child, output, exited };
}

/** Runs the built CLI `bin` to its end with exactly `env`: exit code, stdout and stderr apart. */
export async function runBuiltCli(
  bin: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { output, exited } = spawnCli(bin, args, env);
  const code = await exited;
  return { code, ...output };
}
