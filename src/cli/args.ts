import { type ParseArgsConfig, parseArgs } from 'node:util';
import { UsageError } from './errors.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** `util.parseArgs` with its errors turned into usage errors (exit 2). */
export function parseCommandArgs<T extends Options>(command: string, argv: string[], options: T) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: false, strict: true });
  } catch (err) {
    throw new UsageError(`${command}: ${(err as Error).message.split('\n')[0]}`);
  }
}

export function intOption(
  name: string,
  value: string | undefined,
  fallback: number,
  min = 0,
  max = 65535,
): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new UsageError(`--${name} expects a whole number from ${min} to ${max}`);
  return n;
}
