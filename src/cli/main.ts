import { readFile } from 'node:fs/promises';
import { redactSecrets } from '../log.js';
import { findProjectRoot } from '../util/project-root.js';
import { CommandFailedError, UsageError } from './errors.js';
import { type CommandIo, processIo } from './io.js';

/*
 * Each command's module (and the providers, which load both CRMs' clients) is imported only when that command
 * runs: a one-shot command such as `status` loads what it uses, not the server, the demo and every CRM client.
 */

type Providers = typeof import('../providers.js');

/** Each command's usage line(s) and what it does: `--help` prints the list, `<command> --help` its own. */
function commandHelp({ crmKinds, providers }: Providers): Record<string, { usage: string; about: string }> {
  return {
    start: {
      usage: 'start [--one-process]',
      about:
        'HTTP server, and workers in a child `worker` process it stops and restarts with it (--one-process: workers in the same process, as before)',
    },
    serve: { usage: 'serve', about: 'HTTP server only' },
    worker: { usage: 'worker', about: 'workers only (run as many as you like on one Redis)' },
    sync: {
      usage: 'sync [--installation ID] [--full] [--wait] [--preview]',
      about:
        'enqueue a backfill, or join the one under way; --wait shows progress and a summary; --preview matches without writing and prints what a write would do',
    },
    status: {
      usage: 'status [--json]',
      about: 'installations, match coverage, queue depths, last errors (needs only Redis and ENCRYPTION_KEY)',
    },
    request: {
      usage: 'request --installation ID --record RECORD_ID [--document FILE]',
      about:
        'ask the service for a report on a company that has none (key needs `write`); prints the submission id',
    },
    record: {
      usage: 'record --installation ID --record RECORD_ID [--json]',
      about:
        "one record as the CRM holds it beside the connector's state (needs only Redis and ENCRYPTION_KEY)",
    },
    doctor: { usage: 'doctor [--json]', about: 'check Redis, the report service and each installation' },
    sandbox: {
      usage: 'sandbox [--port N] [--rate-limit N] [--webhook-url URL] [--webhook-secret S]',
      about: 'a local Published Report Lookup Service with fixture data',
    },
    demo: {
      usage: `demo [--crm ${crmKinds.join('|')}] [--port N] [--companies N]`,
      about:
        'everything on this machine against the sandbox and a local CRM (N companies, 300 by default); prints the environment that drives it from another shell',
    },
    manifests: {
      usage: 'manifests --app-url URL [--out DIR]',
      about: `write ${providers.map((p) => p.manifestsName).join(' and ')} for your APP_URL`,
    },
  };
}

/** Each provider's variables, by their common start (its kind in capitals: provider-facts.test.ts checks it). */
function crmVariables({ providers }: Providers): string {
  return providers.map((p) => `${p.kind.toUpperCase()}_*`).join(', ');
}

const environment = (
  p: Providers,
) => `Environment (also read from .env; the README's Configuration table lists every variable):
  REDIS_URL, REDIS_PREFIX     where the state lives (default redis://127.0.0.1:6379, rc)
  ENCRYPTION_KEY              32 bytes as base64: tokens and keys are sealed with it
  ADMIN_TOKEN                 the admin page's and admin API's token
  ADMIN_TOKENS                named admins' tokens, name:token pairs (decisions logged by name)
  REPORTS_API_URL, REPORTS_API_KEY
                              the report service and the operator's key
  ${crmVariables(p).padEnd(28)}each CRM's app or token`;

function wrap(text: string, indent: string, width = 110): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && indent.length + line.length + word.length + 1 > width) {
      lines.push(indent + line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(indent + line);
  return lines.join('\n');
}

async function usage(): Promise<string> {
  const p = await import('../providers.js');
  return [
    'Usage: report-connector <command> [options]   (report-connector <command> --help for one)',
    '',
    'Commands:',
    ...Object.values(commandHelp(p)).flatMap(({ usage, about }) => [`  ${usage}`, wrap(about, '      ')]),
    '  --verbose',
    wrap('with any command: its JSON logs on stderr (otherwise only errors are logged)', '      '),
    '  --version',
    wrap("the connector's and Node's versions", '      '),
    '',
    environment(p),
  ].join('\n');
}

async function commandUsage(name: string): Promise<string> {
  const p = await import('../providers.js');
  const help = commandHelp(p)[name]!;
  return [`Usage: report-connector ${help.usage}`, '', wrap(help.about, '  '), '', environment(p)].join('\n');
}

type Command = (argv: string[], io: CommandIo) => Promise<number>;

const COMMANDS: Record<string, () => Promise<Command>> = {
  start: async () => {
    const { runCommand } = await import('./commands/run.js');
    return (a, io) => runCommand('start', a, io);
  },
  serve: async () => {
    const { runCommand } = await import('./commands/run.js');
    return (a, io) => runCommand('serve', a, io);
  },
  worker: async () => {
    const { runCommand } = await import('./commands/run.js');
    return (a, io) => runCommand('worker', a, io);
  },
  sync: async () => (await import('./commands/sync.js')).syncCommand,
  status: async () => (await import('./commands/status.js')).statusCommand,
  request: async () => (await import('./commands/request.js')).requestCommand,
  record: async () => (await import('./commands/record.js')).recordCommand,
  doctor: async () => (await import('./commands/doctor.js')).doctorCommand,
  sandbox: async () => (await import('./commands/sandbox.js')).sandboxCommand,
  demo: async () => (await import('./commands/demo.js')).demoCommand,
  manifests: async () => (await import('./commands/manifests.js')).manifestsCommand,
};

export async function main(argv: string[], given: CommandIo = processIo()): Promise<number> {
  const verbose = argv.includes('--verbose');
  const io: CommandIo = verbose ? { ...given, verbose: true } : given;
  const [name, ...rest] = argv.filter((a) => a !== '--verbose');
  if (name === '--version' || name === '-v') {
    io.out(`report-connector ${await packageVersion()} (node ${process.version})`);
    return 0;
  }
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    (name === undefined ? io.err : io.out)(await usage());
    return name === undefined ? 2 : 0;
  }
  const load = COMMANDS[name];
  if (!load) {
    io.err(`Unknown command "${name}": run report-connector --help for the list.`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.out(await commandUsage(name));
    return 0;
  }
  try {
    const command = await load();
    return await command(rest, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`${err.message} (run report-connector --help)`);
      return 2;
    }
    if (err instanceof CommandFailedError) {
      io.err(err.message);
      return 1;
    }
    io.err(
      `report-connector ${name} failed: ${redactSecrets(err instanceof Error ? err.message : String(err))}`,
    );
    return 1;
  }
}

async function packageVersion(): Promise<string> {
  const pkg = JSON.parse(await readFile(`${findProjectRoot()}/package.json`, 'utf8')) as { version?: string };
  return pkg.version ?? 'unknown';
}
