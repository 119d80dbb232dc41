/** What the CLI exits with: 0 success, 1 failure, 2 bad usage. Every failure prints one line saying what to do. */

export class UsageError extends Error {
  readonly code = 'USAGE';
  readonly exitCode = 2;
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export class CommandFailedError extends Error {
  readonly code = 'COMMAND_FAILED';
  readonly exitCode = 1;
  constructor(message: string) {
    super(message);
    this.name = 'CommandFailedError';
  }
}
