/** The CLI's contact with the world, so commands can be run from tests. */
export interface CommandIo {
  /** stdout: only `--json` output and tables meant for pipes. */
  out(text: string): void;
  /** stderr: logs, progress and messages for people. */
  err(text: string): void;
  env: NodeJS.ProcessEnv;
  isTTY: boolean;
  /** `--verbose`: the command's JSON logs on stderr; otherwise a one-shot command logs errors only. */
  verbose?: boolean;
  /** Resolves on SIGINT/SIGTERM. */
  untilStopped(): Promise<void>;
}

export function processIo(): CommandIo {
  return {
    out: (t) => process.stdout.write(`${t}\n`),
    err: (t) => process.stderr.write(`${t}\n`),
    env: process.env,
    isTTY: Boolean(process.stderr.isTTY),
    untilStopped: () =>
      new Promise((resolve) => {
        const done = () => {
          process.off('SIGINT', done);
          process.off('SIGTERM', done);
          resolve();
        };
        process.once('SIGINT', done);
        process.once('SIGTERM', done);
      }),
  };
}
