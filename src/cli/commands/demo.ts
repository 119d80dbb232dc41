import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LocalSystem } from '../../../local/system.js';
import type { CrmKind } from '../../crm/kind.js';
import { crmKinds, type Provider, providerFor, providers } from '../../providers.js';
import { deleteKeysWithPrefix } from '../../redis.js';
import { findProjectRoot } from '../../util/project-root.js';
import {
  INSTALL_REDIS_HINT,
  redisAnswers,
  redisServerBinary,
  startThrowawayRedis,
  type ThrowawayRedis,
} from '../../util/throwaway-redis.js';
import { intOption, parseCommandArgs } from '../args.js';
import { CommandFailedError, UsageError } from '../errors.js';
import type { CommandIo } from '../io.js';
import { followRuns, summaryLine } from './sync.js';

/**
 * `demo`: the whole product on this machine. The sandbox report service, a local CRM seeded with a few
 * hundred companies, the server and the workers, all with the production code paths; then one score changes in
 * the sandbox and the signed `score.changed` travels into the CRM.
 */
export async function demoCommand(argv: string[], io: CommandIo): Promise<number> {
  // At once: everything below (Redis, the sandbox, the local CRM, the first backfill) takes seconds.
  io.err('Starting the demo...');
  const { crm, provider, port, companies } = demoOptions(argv, io);
  const prefix = `rc-demo-${randomBytes(3).toString('hex')}`;
  const { redisUrl, ownRedis } = await demoRedis(io);
  try {
    const adminToken = randomBytes(18).toString('base64url');
    // Fixed here, not drawn by the demo's config, so that the block below can hand it to the CLI.
    const encryptionKey = randomBytes(32).toString('base64');

    // Listen for Ctrl-C from the start: one pressed while the demo is still setting up stops it once set up.
    const stopped = io.untilStopped();
    io.err(
      `Setting up ${provider.label} with ${companies} companies, the report sandbox, the server and the workers...`,
    );
    const { system, cliEnv } = await startDemoSystem(
      { crm, companies, prefix, port, redisUrl, adminToken, encryptionKey },
      io,
    );
    try {
      io.err(`Report sandbox: ${system.sandboxUrl}`);
      io.err(`Local ${provider.label}: ${system.crmUrl}`);
      io.err(`Connector: ${system.appUrl}`);
      await showFirstBackfill(system, io);
      await showOneScoreChange(system, provider, io);
      io.out('');
      io.out(`Admin page: ${system.appUrl}/admin  (token: ${adminToken})`);
      // The local CRM has an OAuth server too: the install (a reconnect of the demo's installation) can be tried.
      io.out(`OAuth install against the local ${provider.label}: ${system.appUrl}${provider.installPath}`);
      io.out(`Component previews (each state of the CRM record components): ${system.componentPreviewUrl}`);
      const block = cliBlock(
        cliEnv(system),
        { ...system, webhookSecrets: system.ctx.config.reports.webhookSecrets },
        findProjectRoot(),
      );
      io.out(`\n${block}`);
      io.out('Press Ctrl-C to stop.');
      await stopped;
      io.err('Stopping...');
      return 0;
    } finally {
      await system.close();
      await deleteKeysWithPrefix(redisUrl, prefix);
    }
  } finally {
    await ownRedis?.stop();
  }
}

/** `--crm`, `--port` and `--companies`, checked. */
function demoOptions(
  argv: string[],
  io: CommandIo,
): { crm: CrmKind; provider: Provider; port: number; companies: number } {
  const { values } = parseCommandArgs('demo', argv, {
    crm: { type: 'string', default: providers[0].kind },
    port: { type: 'string' },
    companies: { type: 'string' },
  });
  const crm = crmKinds.find((kind) => kind === values.crm);
  if (!crm) throw new UsageError(`--crm expects ${crmKinds.join(' or ')}`);
  const provider = providerFor(crm);
  const port = intOption('port', values.port, Number(io.env.PORT ?? 3000));
  const companies = intOption('companies', values.companies, 300, 1, 100_000);
  return { crm, provider, port, companies };
}

/** The Redis at REDIS_URL, or a throwaway redis-server of the demo's own when nothing answers there. */
async function demoRedis(io: CommandIo): Promise<{ redisUrl: string; ownRedis: ThrowawayRedis | null }> {
  const redisUrl = io.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  if (await redisAnswers(redisUrl)) return { redisUrl, ownRedis: null };
  const bin = redisServerBinary(io.env);
  if (!bin)
    throw new CommandFailedError(
      `Nothing answers at ${redisUrl} and no redis-server is installed: ${INSTALL_REDIS_HINT}.`,
    );
  const ownRedis = await startThrowawayRedis(bin);
  io.err(
    `Nothing answered at ${redisUrl}: the demo runs a redis-server of its own at ${ownRedis.url} (stopped with the demo).`,
  );
  return { redisUrl: ownRedis.url, ownRedis };
}

/** The local system, with a port in use or an absent Redis told as such; and the CLI environment it runs with. */
async function startDemoSystem(
  setup: {
    crm: CrmKind;
    companies: number;
    prefix: string;
    port: number;
    redisUrl: string;
    adminToken: string;
    encryptionKey: string;
  },
  io: CommandIo,
): Promise<{ system: LocalSystem; cliEnv: (system: LocalSystem) => Record<string, string> }> {
  try {
    // Loaded here, not at the top: the local system is demo and test equipment, never part of a production run.
    const local = await import('../../../local/system.js');
    const system = await local.startLocalSystem({
      crm: setup.crm,
      companies: setup.companies,
      prefix: setup.prefix,
      port: setup.port,
      redisUrl: setup.redisUrl,
      logLevel: io.env.LOG_LEVEL ?? 'warn',
      env: { ADMIN_TOKEN: setup.adminToken, ENCRYPTION_KEY: setup.encryptionKey },
    });
    return { system, cliEnv: local.workerEnvFor };
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EADDRINUSE')
      throw new CommandFailedError(`port ${setup.port} is in use: run the demo with --port N`);
    if (e.code === 'REDIS_UNAVAILABLE') throw new CommandFailedError(e.message);
    throw err;
  }
}

async function showFirstBackfill(system: LocalSystem, io: CommandIo): Promise<void> {
  io.err('First backfill:');
  const [initial] = await system.ctx.runs.recent(system.installationId, 1);
  if (!initial) throw new CommandFailedError('the first backfill did not start');
  const [run] = await followRuns(system.ctx, [initial.id], io);
  // The demo's first backfill: every record is this run's, so the overall line would repeat it.
  io.err(summaryLine(run!));
}

/** One linked record, its score changed at the source: waits for it in the CRM and shows before and after. */
async function showOneScoreChange(system: LocalSystem, provider: Provider, io: CommandIo): Promise<void> {
  const linked = system.recordIds
    .map((id) => system.crm.record(id))
    .find((r) => r?.status === 'matched' && r.slug);
  if (!linked?.slug) throw new CommandFailedError('no record was matched, so there is nothing to update');
  const before = system.crm.record(linked.id)!;
  const report = system.sandbox.getReport(linked.slug)!;
  // Far enough to cross a band of the sandbox's rule (75 is "strong"), so the band column changes too.
  const overall = report.score.overall;
  const newScore = Math.round((overall >= 75 ? overall - 11.3 : Math.max(overall + 11.3, 75.5)) * 10) / 10;
  io.err(`Changing the score of ${linked.slug} in the sandbox: ${report.score.overall} -> ${newScore}`);
  const changedAt = Date.now();
  system.sandbox.updateReport(linked.slug, {
    // The band from the sandbox's own rule (src/sandbox/bands.ts), like every other score it changes.
    score: { overall: newScore },
  });
  const deadline = Date.now() + 30_000;
  let after = system.crm.record(linked.id)!;
  while (after.score !== newScore) {
    if (Date.now() > deadline)
      throw new CommandFailedError('the score change did not reach the CRM within 30 s');
    await sleep(50);
    after = system.crm.record(linked.id)!;
  }
  const took = Date.now() - changedAt;
  io.out('');
  io.out(`score.changed for ${linked.slug} reached the CRM record in ${took} ms:`);
  io.out(
    table([
      ['', 'before', 'after'],
      ['company', before.name ?? '', after.name ?? ''],
      [provider.fieldNames.slug, before.slug ?? '', after.slug ?? ''],
      [provider.fieldNames.score, String(before.score ?? ''), String(after.score ?? '')],
      [provider.fieldNames.band, before.band ?? '', after.band ?? ''],
      [provider.fieldNames.syncedAt, before.syncedAt ?? '', after.syncedAt ?? ''],
    ]),
  );
}

/** Variables the CLI reads from the environment, for a shell beside the demo; not the process's own. */
const NOT_FOR_THE_CLI = new Set(['PATH', 'LOG_LEVEL']);

/**
 * The environment block and commands that drive this demo from another shell while it runs: the same Redis,
 * prefix, encryption key, upstreams and webhook secret the demo uses (so `doctor` sees what the demo runs
 * with), and the names the README's demo commands use (SANDBOX_PORT, INSTALLATION, RECORD). The commands go
 * through npx from the project's folder, which the block enters: a new shell has no `report-connector` on its
 * PATH. Its keys are deleted when the demo stops.
 */
export function cliBlock(
  env: Record<string, string>,
  system: Pick<LocalSystem, 'installationId' | 'recordIds' | 'crm' | 'sandboxUrl'> & {
    webhookSecrets: readonly string[];
  },
  projectRoot: string,
): string {
  const quote = (v: string) => (/^[\w@%+=:,./-]*$/.test(v) ? v : `'${v.replaceAll("'", "'\\''")}'`);
  const id = system.installationId;
  // A report can be requested only for a company without one.
  const record = system.recordIds.find((r) => system.crm.record(r)?.status === 'no_match') ?? 'RECORD_ID';
  const demo: Record<string, string> = {
    ...Object.fromEntries(Object.entries(env).filter(([k]) => !NOT_FOR_THE_CLI.has(k))),
    ...(system.webhookSecrets.length > 0 ? { REPORTS_WEBHOOK_SECRET: system.webhookSecrets.join(',') } : {}),
    SANDBOX_PORT: new URL(system.sandboxUrl).port,
    INSTALLATION: id,
    RECORD: record,
  };
  return [
    'To drive this demo from another shell while it runs, paste:',
    `cd ${quote(projectRoot)}`,
    ...Object.entries(demo).map(([k, v]) => `export ${k}=${quote(v)}`),
    'Then, for example:',
    '  npx report-connector status',
    '  npx report-connector sync --installation $INSTALLATION --preview',
    '  npx report-connector doctor',
    '  npx report-connector request --installation $INSTALLATION --record $RECORD',
    '  npx report-connector record --installation $INSTALLATION --record $RECORD',
  ].join('\n');
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows
    .map((r) =>
      r
        .map((cell, c) => cell.padEnd(widths[c]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
