import { createSandbox, DEFAULT_PORT, DEFAULT_RATE_LIMIT_PER_MINUTE } from '../../sandbox/index.js';
import { intOption, parseCommandArgs } from '../args.js';
import type { CommandIo } from '../io.js';

export async function sandboxCommand(argv: string[], io: CommandIo): Promise<number> {
  const { values } = parseCommandArgs('sandbox', argv, {
    port: { type: 'string' },
    'rate-limit': { type: 'string' },
    'webhook-url': { type: 'string' },
    'webhook-secret': { type: 'string' },
  });
  const port = intOption('port', values.port, DEFAULT_PORT);
  const rateLimitPerMinute = intOption(
    'rate-limit',
    values['rate-limit'],
    DEFAULT_RATE_LIMIT_PER_MINUTE,
    1,
    1_000_000,
  );
  const sandbox = createSandbox({
    rateLimitPerMinute,
    ...(values['webhook-url'] ? { webhookUrl: values['webhook-url'] } : {}),
    ...(values['webhook-secret'] ? { webhookSecret: values['webhook-secret'] } : {}),
  });
  const stopped = io.untilStopped();
  const listening = await sandbox.listen(port);
  io.err(
    `Sandbox report service at ${listening.url} (keys: sk_sandbox_read, sk_sandbox_write, sk_sandbox_legacy, sk_sandbox_revoked)`,
  );
  await stopped;
  await listening.close();
  return 0;
}
