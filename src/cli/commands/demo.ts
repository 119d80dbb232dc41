import { CommandFailedError } from '../errors.js';
import type { CommandIo } from '../io.js';

export async function demoCommand(_argv: string[], _io: CommandIo): Promise<number> {
  throw new CommandFailedError('demo is not built yet');
}
