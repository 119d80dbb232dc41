import { changeSourceOf } from '../../app/change-source.js';
import type { AppContext } from '../../app/context.js';
import { perMinute } from '../../app/rate-words.js';
import type { ReportRateView } from '../../app/runtime.js';
import { scanTargets } from '../../redis.js';
import { parseCommandArgs } from '../args.js';
import { CommandFailedError } from '../errors.js';
import type { CommandIo } from '../io.js';
import { openContext } from './context.js';
import { unreadableSecrets } from './secrets-check.js';

/**
 * `status [--json]`: installations, where their CRM changes come from, match coverage, the report key's rate,
 * queue depths, last errors.
 */
export async function statusCommand(argv: string[], io: CommandIo): Promise<number> {
  const { values } = parseCommandArgs('status', argv, { json: { type: 'boolean', default: false } });
  const ctx = await openContext(io, { mode: 'read-only' });
  try {
    // Before anything reads the queues (opening a queue writes its own small keys under the prefix).
    if ((await ctx.installations.list()).length === 0 && !(await prefixUsed(ctx))) {
      throw new CommandFailedError(
        `Nothing was ever stored under REDIS_PREFIX "${ctx.config.redisPrefix}" in this Redis: check REDIS_PREFIX and REDIS_URL (they must be the server's, as in its .env); a new deployment has keys once its server has started.`,
      );
    }
    const report = await collectStatus(ctx);
    const unreadable = (await Promise.all(report.installations.map((i) => unreadableSecrets(ctx, i)))).filter(
      (s): s is string => s !== null,
    );
    if (values.json) {
      io.out(JSON.stringify(report, null, 2));
      for (const s of unreadable) io.err(s);
      return unreadable.length > 0 ? 1 : 0;
    }
    const lines: string[] = [];
    if (report.installations.length === 0) {
      const { crmLabels } = await import('../../providers.js');
      lines.push(`No installations yet: install the app in ${crmLabels()}.`);
    }
    for (const i of report.installations) {
      lines.push(`${i.id} (${i.crm}, ${i.mode}): ${i.status}${i.statusReason ? ` (${i.statusReason})` : ''}`);
      lines.push(`  changes: ${i.changeSource.mode} (${i.changeSource.reason}): ${i.changeSource.detail}`);
      if (i.fixtureRefusal) lines.push(`  writes refused: ${i.fixtureRefusal}`);
      else if (i.allowFixtureWrites)
        lines.push('  fixture scores allowed in this production CRM by an operator');
      lines.push(
        `  coverage: matched ${i.coverage.matched}, needs review ${i.coverage.needs_review}, no match ${i.coverage.no_match}, not published ${i.coverage.not_published}, error ${i.coverage.error}`,
      );
      if (i.reportRate) lines.push(`  ${rateLine(i.reportRate)}`);
      if (i.lastRun) {
        const t = i.lastRun.totals;
        lines.push(
          `  last sync (${i.lastRun.kind}, ${i.lastRun.state}): ${t.records} records, ${t.linked} linked, ${t.written} written, ${t.unchanged} unchanged, ${t.skipped} skipped, ${t.failed} failed`,
        );
        for (const e of i.lastRun.errors.slice(0, 5))
          lines.push(`  error ${e.recordId}: ${e.code} ${e.message}`);
      }
    }
    lines.push('Queues:');
    for (const [name, c] of Object.entries(report.queues)) {
      lines.push(
        `  ${name}: waiting ${c.waiting}, active ${c.active}, delayed ${c.delayed}, failed ${c.failed}`,
      );
    }
    io.out(lines.join('\n'));
    for (const s of unreadable) io.err(s);
    return unreadable.length > 0 ? 1 : 0;
  } finally {
    await ctx.close();
  }
}

/** BullMQ's per-queue `meta` keys: written by merely opening a queue (by `status` itself, say). */
const QUEUE_META = /^[^:]+:\{[^}]*\}:[^:]+:meta$/;

/**
 * Whether anything of a deployment was ever stored under the prefix: a server that started, an installation
 * since removed. A prefix with nothing is most likely a typo or another .env.
 */
async function prefixUsed(ctx: AppContext): Promise<boolean> {
  for (const node of await scanTargets(ctx.redis)) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', ctx.keys.everything(), 'COUNT', 1000);
      if (keys.some((k) => !QUEUE_META.test(k))) return true;
      cursor = next;
    } while (cursor !== '0');
  }
  return false;
}

/** One line: the rate the key's gate allows now, how it moves, its ceiling, and the last cut when one is stored. */
function rateLine(r: ReportRateView): string {
  const n = perMinute;
  const ceiling = r.ceilingPerMinute === null ? 'no ceiling' : `ceiling ${n(r.ceilingPerMinute)}/min`;
  if (!r.learnt)
    return `report-service rate: ${n(r.perMinute)}/min to start with (${ceiling}; nothing learnt)`;
  const quota = r.statedQuota ? `, stated by the service's headers ${n(r.statedQuota.perMinute)}/min` : '';
  const limit =
    r.limitPerMinute === null ? '' : `, key's limit ${n(r.limitPerMinute)}/min as its last 429 showed`;
  const cut = r.lastCut ? `; last cut ${r.lastCut.at} (${r.lastCut.reason})` : '';
  return `report-service rate: ${n(r.perMinute)}/min learnt, ${r.phase ?? 'rising'} (${ceiling}${limit}${quota})${cut}; kept until ${r.keptUntil ?? '-'} unless the key is used`;
}

export async function collectStatus(ctx: AppContext) {
  const installations = await ctx.installations.list();
  return {
    installations: await Promise.all(
      installations.map(async (i) => {
        const [lastRun] = await ctx.runs.recent(i.id, 1);
        return {
          ...i,
          coverage: await ctx.index.coverage(i.id),
          reportRate: await ctx.runtime.reportRate(i),
          changeSource: await changeSourceOf(ctx, i),
          lastRun: lastRun ?? null,
        };
      }),
    ),
    queues: await ctx.queues.counts(),
  };
}
