import type { AppContext } from '../../app/context.js';
import type { EnsureFieldsResult } from '../../crm/connector.js';
import { isLetIn } from '../../installations/let-in.js';
import { providers } from '../../providers.js';
import { describeRedisMode, inspectRedis, versionSupported } from '../../redis-health.js';
import { ReportForbiddenError, ReportServiceError, ReportUnauthorizedError } from '../../reports/errors.js';
import { writeScopeOf } from '../../reports/key-scopes.js';
import { parseCommandArgs } from '../args.js';
import type { CommandIo } from '../io.js';
import { openContext } from './context.js';

/**
 * `doctor [--json]`: checks Redis, the report service and each installation, and says what to fix. FAIL lines
 * make the exit status 1; WARN lines need a look and do not. An installation not let in yet is reported without
 * a single call to its CRM: nothing reads or changes a CRM before approval.
 */

export interface Check {
  name: string;
  ok: boolean;
  /** Worth a person's look, but nothing is broken: printed as WARN, does not fail the exit status. */
  warn?: boolean;
  detail: string;
  fix?: string;
}

export async function doctorCommand(argv: string[], io: CommandIo): Promise<number> {
  const { values } = parseCommandArgs('doctor', argv, { json: { type: 'boolean', default: false } });
  const ctx = await openContext(io);
  try {
    const checks = withFixWhereNeeded([
      ...(await redisChecks(ctx)),
      ...(await reportChecks(ctx)),
      ...(await installationChecks(ctx)),
    ]);
    if (values.json) io.out(JSON.stringify({ ok: checks.every((c) => c.ok), checks }, null, 2));
    else {
      for (const c of checks) io.out(checkLine(c));
      io.out(summaryLine(checks));
    }
    return checks.every((c) => c.ok) ? 0 : 1;
  } finally {
    await ctx.close();
  }
}

/** A fix is said under a FAIL or a WARN only: an ok line needs nothing done (a check states its fix either way). */
export function withFixWhereNeeded(checks: Check[]): Check[] {
  return checks.map((c) => (c.ok && !c.warn && c.fix !== undefined ? { ...c, fix: undefined } : c));
}

export function checkLine(c: Check): string {
  const mark = !c.ok ? 'FAIL' : c.warn ? 'WARN' : 'ok  ';
  return `${mark} ${c.name}: ${c.detail}${c.fix ? `\n     fix: ${c.fix}` : ''}`;
}

/** The last line: how many checks failed and how many warn, so the answer is plain without reading them all. */
function summaryLine(checks: Check[]): string {
  const failed = checks.filter((c) => !c.ok).length;
  const warned = checks.filter((c) => c.ok && c.warn).length;
  const warnings = `${warned} warning${warned === 1 ? '' : 's'}`;
  return failed > 0
    ? `${failed} check${failed === 1 ? '' : 's'} failed, ${warnings}: fix the FAIL lines above`
    : `no check failed, ${warnings}`;
}

async function redisChecks(ctx: AppContext): Promise<Check[]> {
  const health = await inspectRedis(ctx.redis);
  const cluster = health.mode === 'cluster';
  // On one Redis the lines read as before; on a cluster each names its master.
  const on = (address: string) => (cluster ? ` (${address})` : '');
  const checks: Check[] = [
    {
      name: 'Redis mode',
      ok: true,
      detail: cluster
        ? `${describeRedisMode(health)}: ${health.nodes.map((n) => n.address).join(', ')} (REDIS_CLUSTER_NODES)`
        : `${describeRedisMode(health)} (REDIS_URL)`,
    },
  ];
  for (const node of health.nodes) {
    checks.push({
      name: `Redis version${on(node.address)}`,
      ok: versionSupported(node.version),
      detail: node.version,
      fix: 'use Redis 6.2 or newer (BullMQ needs it)',
    });
    if (node.clusterState !== null) {
      checks.push({
        name: `Redis Cluster state${on(node.address)}`,
        ok: node.clusterState === 'ok',
        detail: `cluster_state:${node.clusterState}`,
        fix: 'every slot must be served by a reachable master: check CLUSTER INFO and CLUSTER NODES',
      });
    }
    checks.push(
      node.maxmemoryPolicy === null
        ? {
            name: `Redis eviction policy${on(node.address)}`,
            ok: true,
            detail: 'CONFIG is not allowed here; check that the policy is noeviction',
          }
        : {
            name: `Redis eviction policy${on(node.address)}`,
            ok: node.maxmemoryPolicy === 'noeviction',
            detail: node.maxmemoryPolicy,
            fix: 'set maxmemory-policy noeviction: any other policy can silently drop queued jobs',
          },
    );
  }
  return checks.map((c) => (c.ok ? { ...c, fix: undefined } : c)) as Check[];
}

async function keyCheck(ctx: AppContext, label: string, apiKey: string): Promise<Check> {
  try {
    const client = ctx.runtime.clientForKey(apiKey);
    const { sandbox } = await client.me();
    const data = sandbox ? 'SANDBOX key (fixture data)' : 'live data';
    const scope = await writeScopeOf(client);
    if (scope.kind === 'write')
      return { name: label, ok: true, detail: `valid, scopes read and write, ${data}` };
    return {
      name: label,
      ok: true,
      warn: true,
      detail:
        scope.kind === 'no-write'
          ? `valid, read scope only (no write: "Request a report" is refused), ${data}`
          : `valid, read scope; whether it may write is unknown (${scope.why}), ${data}`,
      fix: 'to request reports, create a key with the write scope in the account settings',
    };
  } catch (err) {
    if (err instanceof ReportUnauthorizedError) {
      return {
        name: label,
        ok: false,
        detail: 'refused (401)',
        fix: 'the key is mistyped or revoked: create a new key in the account settings',
      };
    }
    if (err instanceof ReportForbiddenError) {
      return {
        name: label,
        ok: false,
        detail: 'lacks the read scope (403)',
        fix: 'create a key with the read scope',
      };
    }
    const msg = err instanceof ReportServiceError ? err.message : String(err);
    return {
      name: label,
      ok: false,
      detail: `unreachable: ${msg}`,
      fix: `check REPORTS_API_URL (${ctx.config.reports.apiUrl})`,
    };
  }
}

async function reportChecks(ctx: AppContext): Promise<Check[]> {
  const checks: Check[] = [];
  if (ctx.config.reports.apiKey)
    checks.push(await keyCheck(ctx, 'Report service (REPORTS_API_KEY)', ctx.config.reports.apiKey));
  else {
    checks.push({
      name: 'Report service (REPORTS_API_KEY)',
      ok: true,
      warn: true,
      detail:
        'no report key: REPORTS_API_KEY is not set, so only installations with a key of their own can sync',
      fix: 'set REPORTS_API_KEY, or enter a key for each installation on the admin page',
    });
  }
  for (const i of await ctx.installations.list()) {
    const key = await ctx.installations.getReportsApiKey(i.id);
    if (key) checks.push(await keyCheck(ctx, `Report service key of ${i.id}`, key));
    else if (!ctx.config.reports.apiKey && isLetIn(i)) {
      checks.push({
        name: `Report service key of ${i.id}`,
        ok: false,
        detail: 'none: it cannot sync',
        fix: 'enter a key on the admin page or set REPORTS_API_KEY',
      });
    }
  }
  if (ctx.config.reports.webhookSecrets.length === 0) {
    checks.push({
      name: 'Report webhooks',
      ok: true,
      warn: true,
      detail:
        'REPORTS_WEBHOOK_SECRET is not set: every report webhook is refused, so score changes arrive only through the reconcile sweep',
      fix: "set REPORTS_WEBHOOK_SECRET to the report service's webhook signing secret",
    });
  }
  return checks;
}

/** The fields' check, and a warning for set-up the CRM refused that the connector runs without. */
function setupChecks(installationId: string, fields: EnsureFieldsResult): Check[] {
  const checks: Check[] = [
    {
      name: `${installationId} fields`,
      ok: fields.problems.length === 0,
      detail:
        fields.problems.length > 0
          ? fields.problems.join('; ')
          : `${fields.existing.length + fields.created.length} present${fields.created.length ? ` (${fields.created.length} created now)` : ''}`,
      fix: 'give the integration user permission to manage and edit the connector fields',
    },
  ];
  // Changes then come by the poll: worth an admin's look, not a failure.
  if (fields.notes?.length) {
    checks.push({ name: `${installationId} set-up`, ok: true, warn: true, detail: fields.notes.join('; ') });
  }
  return checks;
}

async function installationChecks(ctx: AppContext): Promise<Check[]> {
  const checks: Check[] = [];
  const installations = await ctx.installations.list();
  if (installations.length === 0) {
    checks.push({
      name: 'Installations',
      ok: true,
      warn: true,
      detail: 'no installation: nothing is synced',
      fix: `install the app from ${providers.map((p) => `${ctx.config.appUrl}${p.installPath}`).join(' or ')}, or set ${providers.map((p) => p.tokenModeVariables.join(' and ')).join(' or ')}`,
    });
  }
  for (const installation of installations) {
    if (!isLetIn(installation)) {
      // Not a single call: its CRM is neither read nor changed before an operator lets it in.
      checks.push({
        name: `${installation.id} approval`,
        ok: true,
        warn: true,
        detail: 'waiting for approval: its CRM was not called (nothing reads or changes it before approval)',
        fix: `approve it on the admin page (${ctx.config.appUrl}/admin) or POST /admin/api/installations/${installation.id}/approve`,
      });
      continue;
    }
    if (installation.status === 'disconnected') {
      checks.push({
        name: `${installation.id} connection`,
        ok: false,
        detail: installation.statusReason ?? 'disconnected',
        fix: `reconnect at ${ctx.config.appUrl}/oauth/${installation.crm}/install`,
      });
      continue;
    }
    try {
      const connector = ctx.runtime.connectorFor(installation);
      await connector.listCompanies(null);
      checks.push({ name: `${installation.id} token`, ok: true, detail: 'valid' });
      checks.push(...setupChecks(installation.id, await connector.ensureFields()));
      if (connector.readAccess) {
        const access = await connector.readAccess();
        checks.push({
          name: `${installation.id} read access`,
          ok: true,
          ...(access.complete === true ? {} : { warn: true }),
          detail: access.detail,
          ...(access.complete === false
            ? {
                fix: 'give the integration user View All on Account (a permission set), or accept a partial backfill',
              }
            : {}),
        });
      }
    } catch (err) {
      checks.push({
        name: `${installation.id} CRM`,
        ok: false,
        detail: (err as Error).message,
        fix: `reconnect at ${ctx.config.appUrl}/oauth/${installation.crm}/install`,
      });
    }
  }
  return checks;
}
