import { readFile } from 'node:fs/promises';
import { redactSecrets } from '../log.js';
import { findProjectRoot } from '../sandbox/project-root.js';
import { demoCommand } from './commands/demo.js';
import { doctorCommand } from './commands/doctor.js';
import { manifestsCommand } from './commands/manifests.js';
import { requestCommand } from './commands/request.js';
import { runCommand } from './commands/run.js';
import { sandboxCommand } from './commands/sandbox.js';
import { statusCommand } from './commands/status.js';
import { syncCommand } from './commands/sync.js';
import { CommandFailedError, UsageError } from './errors.js';
import { type CommandIo, processIo } from './io.js';

const USAGE = `Usage: report-connector <command> [options]

Commands:
  start                       HTTP server and workers in one process
  serve                       HTTP server only
  worker                      workers only (run as many as you like on one Redis)
  sync [--installation ID] [--full] [--wait] [--preview]
                              enqueue a backfill; --wait shows progress and a summary;
                              --preview matches without writing and prints what a write would do
  status [--json]             installations, match coverage, queue depths, last errors
  request --installation ID --record RECORD_ID [--document FILE]
                              ask the service for a report on a company that has none (key needs \`write\`);
                              prints the submission id
  doctor [--json]             check Redis, the report service and each installation
  sandbox [--port N] [--rate-limit N] [--webhook-url URL] [--webhook-secret S]
                              a local Published Report Lookup Service with fixture data
  demo [--crm hubspot|salesforce] [--port N]
                              everything on this machine against the sandbox and a local CRM
  manifests --app-url URL [--out DIR]
                              write the HubSpot project and the SFDX project for your APP_URL
  --version                   the connector's and Node's versions`;

type Command = (argv: string[], io: CommandIo) => Promise<number>;

const COMMANDS: Record<string, Command> = {
  start: (a, io) => runCommand('start', a, io),
  serve: (a, io) => runCommand('serve', a, io),
  worker: (a, io) => runCommand('worker', a, io),
  sync: syncCommand,
  status: statusCommand,
  request: requestCommand,
  doctor: doctorCommand,
  sandbox: sandboxCommand,
  demo: demoCommand,
  manifests: manifestsCommand,
};

export async function main(argv: string[], io: CommandIo = processIo()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-v') {
    io.out(`report-connector ${await packageVersion()} (node ${process.version})`);
    return 0;
  }
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    (name === undefined ? io.err : io.out)(USAGE);
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.err(`Unknown command "${name}": run report-connector --help for the list.`);
    return 2;
  }
  try {
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
