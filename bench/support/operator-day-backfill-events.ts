import type { LocalSystem } from '../../local/system.js';
import { crmKind } from '../../src/providers.js';
import { deleteKeysWithPrefix } from '../../src/redis.js';
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
  if (setting === 'cluster')
    throw new Error('the events-during-backfill phase runs on HubSpot or Salesforce');
  let system: LocalSystem | undefined;
  try {
    system = await startOperatorSystem({
      ...base,
      crm: crmKind(setting === 'salesforce' ? 'salesforce' : 'hubspot'),
    });
    const sys = system;
    const day = await operatorDay(sys, syncAfterMs, alone);
    const sender = new ScoreEventSender(sys, BACKFILL_EVENT_EVERY_MS, 'msg_backfill');
    sender.start();
    let backfillEndAt: number | null = null;
    try {
      const { settledAt } = await settle(sys, day.startedAt, timeoutMs, { runsOnly: true });
      backfillEndAt = settledAt;
      say(`  ${((settledAt - day.startedAt) / 1000).toFixed(1)} s: first sync's runs ended`);
    } catch (err) {
      say(`  backfill: ${(err as Error).message}`);
    }
    await sender.stop();
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
    };
  } finally {
    if (system) {
      await system.close();
      await deleteKeysWithPrefix(system.ctx.config.redisUrl, system.ctx.config.redisPrefix);
    }
  }
}

/** Every call the local CRM answered (reads, searches, writes). */
function crmCalls(system: LocalSystem): number {
  const calls = system.salesforce ? system.salesforce.counters() : system.hubspot.stats().calls;
  return Object.values(calls).reduce((a, b) => a + b, 0);
}
