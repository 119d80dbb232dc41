import { checkRedis } from '../../app/bootstrap.js';
import { type AppContext, createAppContext } from '../../app/context.js';
import { ConfigError, type LoadConfigOptions, loadConfig } from '../../config.js';
import { createLogger } from '../../log.js';
import { CommandFailedError } from '../errors.js';
import type { CommandIo } from '../io.js';

/**
 * Loads the configuration and opens the context; every problem becomes one line and exit 1. A one-shot command
 * logs errors only (its output is for people), unless `--verbose`; the long-running ones (`logs: 'always'`)
 * log at LOG_LEVEL.
 */
export async function openContext(
  io: CommandIo,
  options: LoadConfigOptions = {},
  logs: 'always' | 'errors' = 'errors',
): Promise<AppContext> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(io.env, options);
  } catch (err) {
    if (err instanceof ConfigError) throw new CommandFailedError(`Configuration: ${err.message}`);
    throw err;
  }
  const level = logs === 'always' || io.verbose ? config.logLevel : 'error';
  const ctx = createAppContext(config, { logger: createLogger(level) });
  try {
    await checkRedis(ctx);
  } catch (err) {
    await ctx.close();
    throw new CommandFailedError((err as Error).message);
  }
  return ctx;
}
