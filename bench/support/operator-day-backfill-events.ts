import type { LocalSystem } from '../../local/system.js';
import { crmKind } from '../../src/providers.js';
import { deleteKeysWithPrefix } from '../../src/redis.js';
import { LocalRedisCluster } from '../../test/support/redis-cluster.js';
import {
  type LatencySummary,
  type LinkedLatencySummary,
  ScoreEventSender,
  summarizeLinked,
  summarizeStrict,
} from './operator-day-events.js';
import type { Setting } from './operator-day-normal.js';
import {
  bulkJobs,
  type OperatorDayOptions,
  operatorDay,
  runsSince,
  settle,
  startOperatorSystem,
  writeCallSizes,
} from './operator-day-setup.js';

/**
 * Events during the backfill on a quiet system (issue 30, "event-to-CRM p95 under 3 s while a backfill
 * saturates both keys on a quiet system"): the normal phase's day (install, reconcile due, `sync --wait`) on a
 * fresh system, with a real score change and its signed `score.changed` every 700 ms from the install until
 * the first sync's runs end. A phase of its own because the events' reads and writes would otherwise be
 * counted in the normal phase's reads, searches and write calls, which its targets are about.
 *
 * A 500-company backfill needs about a dozen CRM calls, far from HubSpot's 110 per 10 s, so on its own it
 * saturates the report key only. To saturate the CRM key too, the phase lists the CRM's companies page after page
 * beside it through the installation's deferrable (backfill) connector, as a large portal's listing does: every
 * CRM call the events need then shares the key with work that would take all of it.
 */

export interface BackfillEventsFigures {
  setting: Setting;
  companies: number;
  eventEveryMs: number;
  /** When the first sync's runs ended, from the install; null when they did not within the timeout. */
  backfillSeconds: number | null;
  runsText: string;
  events: { sent: number; acknowledged: number; lost: number };
  linked: LinkedLatencySummary;
  strict: LatencySummary;
  reportCalls: number;
  reportLimited: number;
  reportSpanSeconds: number;
  crmCalls: number;
  crmWriteCalls: number;
  /** Listing calls of the CRM load beside the backfill, and their rate. */
  crmLoadCalls: number;
  crmLoadPerSecond: number;
}

export const BACKFILL_EVENT_EVERY_MS = 700;

export async function measureEventsDuringBackfill(
  setting: Setting,
  base: Omit<OperatorDayOptions, 'crm' | 'clusterNodes'>,
  syncAfterMs: number,
  timeoutMs: number,
  alone: boolean,
  say: (line: string) => void,
): Promise<BackfillEventsFigures> {
  // HubSpot on a 3-master cluster of its own, as in the normal phase.
  const cluster = setting === 'cluster' ? await LocalRedisCluster.start({ masters: 3 }) : null;
  let system: LocalSystem | undefined;
  try {
    system = await startOperatorSystem({
      ...base,
      crm: crmKind(setting === 'salesforce' ? 'salesforce' : 'hubspot'),
      ...(cluster ? { clusterNodes: cluster.nodesEnv } : {}),
    });
    const sys = system;
    const day = await operatorDay(sys, syncAfterMs, alone);
    const sender = new ScoreEventSender(sys, BACKFILL_EVENT_EVERY_MS, 'msg_backfill');
    sender.start();
    const load = await CrmLoad.start(sys);
    let backfillEndAt: number | null = null;
    try {
      const { settledAt } = await settle(sys, day.startedAt, timeoutMs, { runsOnly: true });
      backfillEndAt = settledAt;
      say(`  ${((settledAt - day.startedAt) / 1000).toFixed(1)} s: first sync's runs ended`);
    } catch (err) {
      say(`  backfill: ${(err as Error).message}`);
    }
    await sender.stop();
    const loaded = await load.stop();
    if (!sys.salesforce)
      say(`  local HubSpot answers by status: ${JSON.stringify(sys.hubspot.stats().statuses)}`);
    await day.cliSync.catch(() => {});
    // Only events sent while the backfill ran: the last one may go out after its runs ended.
    const during = sender.events.filter((e) => backfillEndAt === null || e.sentAt < backfillEndAt);
    const acked = during.filter((e) => e.ackAt !== null);
    const runs = await runsSince(sys, day.startedAt);
    const answers = sys.sandbox.answerCounts();
    return {
      setting,
      companies: base.companies,
      eventEveryMs: BACKFILL_EVENT_EVERY_MS,
      backfillSeconds: backfillEndAt === null ? null : (backfillEndAt - day.startedAt) / 1000,
      runsText: runs.map((r) => `${r.kind} ${r.state}`).join(', '),
      events: {
        sent: during.length,
        acknowledged: acked.length,
        lost: acked.filter((e) => e.landedAt === null).length,
      },
      linked: summarizeLinked(during),
      strict: summarizeStrict(during),
      reportCalls: sys.sandbox.requestCount(),
      reportLimited: answers.byStatus['429'] ?? 0,
      reportSpanSeconds:
        answers.firstAt !== null && answers.lastAt !== null ? (answers.lastAt - answers.firstAt) / 1000 : 0,
      crmCalls: crmCalls(sys),
      crmWriteCalls: writeCallSizes(sys).length + bulkJobs(sys),
      crmLoadCalls: loaded.calls,
      crmLoadPerSecond: loaded.calls / Math.max(loaded.seconds, 0.001),
    };
  } finally {
    if (system) {
      await system.close();
      if (!cluster) await deleteKeysWithPrefix(system.ctx.config.redisUrl, system.ctx.config.redisPrefix);
    }
    await cluster?.stop();
  }
}

/** Every call the local CRM answered (reads, searches, writes). */
function crmCalls(system: LocalSystem): number {
  const calls = system.salesforce ? system.salesforce.counters() : system.hubspot.stats().calls;
  return Object.values(calls).reduce((a, b) => a + b, 0);
}

/** Lists the CRM's companies back to back through the installation's deferrable connector until stopped. */
class CrmLoad {
  private constructor(
    private readonly done: Promise<void>,
    private readonly startedAt: number,
    private readonly counter: { calls: number; running: boolean },
  ) {}

  static async start(system: LocalSystem): Promise<CrmLoad> {
    const { connector } = await system.ctx.runtime.open(system.installationId, { urgent: false });
    const counter = { calls: 0, running: true };
    const done = (async () => {
      let cursor: string | null = null;
      while (counter.running) {
        const page = await connector.listCompanies(cursor);
        counter.calls += 1;
        cursor = page.nextCursor;
      }
    })();
    return new CrmLoad(done, Date.now(), counter);
  }

  async stop(): Promise<{ calls: number; seconds: number }> {
    this.counter.running = false;
    await this.done;
    return { calls: this.counter.calls, seconds: (Date.now() - this.startedAt) / 1000 };
  }
}
