import type { LocalSystem } from '../../local/system.js';
import { crmKind } from '../../src/providers.js';
import { deleteKeysWithPrefix } from '../../src/redis.js';
import { LocalRedisCluster } from '../../test/support/redis-cluster.js';
import {
  bulkJobs,
  cli,
  firstWriteWatch,
  type OperatorDayOptions,
  operatorDay,
  resetUpstreamCounts,
  settle,
  startOperatorSystem,
  writeCallSizes,
} from './operator-day-setup.js';

/**
 * The operator day's normal phase (issue 30): install, reconcile due, `sync --wait` a few seconds later, on a
 * throttled and failing report service; then a second full sync with nothing changed. Counted at the
 * upstreams: listing passes, searches and reads (answered ones, per query and per slug), write calls and
 * their sizes, the time to the first write and to the end.
 */

export type Setting = 'hubspot' | 'salesforce' | 'cluster';

export interface UpstreamCounts {
  writeSizes: number[];
  bulkJobs: number;
  /** Answered (200) searches, and distinct queries among them. */
  searches: number;
  distinctSearches: number;
  /** Answered (200/404) reads, and distinct slugs among them. */
  reads: number;
  distinctReads: number;
  /** Report-service calls of any kind and answer (429s and 503s included). */
  reportCalls: number;
  reportLimited: number;
}

export interface NormalFigures {
  setting: Setting;
  companies: number;
  batchSize: number;
  /** Runs started (their kinds), and records they listed ÷ companies. */
  runs: { kind: string; state: string; listed: number; written: number; stoppedReason: string | null }[];
  listingPasses: number;
  /** Answered reads ÷ distinct slugs read (the slugs the portal needs); slugs read twice, three times or more. */
  readsPerNeededSlug: number;
  slugsReadTwice: number;
  slugsReadThrice: number;
  /** Distinct queries searched twice or more. */
  queriesSearchedTwice: number;
  first: UpstreamCounts;
  recordsChanged: number;
  writeCallsPerFullBatch: number;
  firstWriteSeconds: number | null;
  firstSyncSeconds: number;
  /** Distinct searches + distinct reads at the key's per-second rate. */
  boundSeconds: number;
  cliExit: number;
  cliSeconds: number;
  /** The key's rate as its gate kept it once the first sync ended, per minute. */
  learntPerMinute: number | null;
  second: UpstreamCounts & { seconds: number; cliExit: number };
}

export async function measureNormal(
  setting: Setting,
  base: Omit<OperatorDayOptions, 'crm' | 'clusterNodes'>,
  syncAfterMs: number,
  timeoutMs: number,
  alone = false,
  firstSyncOnly = false,
): Promise<NormalFigures> {
  const cluster = setting === 'cluster' ? await LocalRedisCluster.start({ masters: 3 }) : null;
  let system: LocalSystem | undefined;
  try {
    const options: OperatorDayOptions = {
      ...base,
      crm: crmKind(setting === 'salesforce' ? 'salesforce' : 'hubspot'),
      ...(cluster ? { clusterNodes: cluster.nodesEnv } : {}),
    };
    system = await startOperatorSystem(options);
    const sys = system;
    const watchStart = Date.now();
    const watch = firstWriteWatch(sys, watchStart);
    // Report-service calls each second, with the 429s so far in brackets: how the key's rate was learnt.
    const perSecond: string[] = [];
    let callsBefore = 0;
    const sampler = setInterval(() => {
      const calls = sys.sandbox.requestCount();
      const limited = sys.sandbox.answerCounts().byStatus['429'] ?? 0;
      perSecond.push(`${calls - callsBefore}${limited ? `(${limited})` : ''}`);
      callsBefore = calls;
    }, 1000);
    // A failed settle must not keep the bench alive.
    sampler.unref();
    const day = await operatorDay(sys, syncAfterMs, alone);
    // The install's run, the reconcile's and the CLI's: as many as the connector lets start (at least one).
    await day.cliSync;
    const { runs, settledAt } = await settle(sys, day.startedAt, timeoutMs);
    clearInterval(sampler);
    process.stderr.write(`${setting}: report-service calls a second (429s so far): ${perSecond.join(' ')}\n`);
    const cliSync = await day.cliSync;
    const firstWriteMs = watch.stop();
    const first = upstreamCounts(sys);
    const installation = await sys.ctx.installations.get(sys.installationId);
    const learnt = installation ? await sys.ctx.runtime.reportRate(installation) : null;
    const answered = sys.sandbox.answeredReads();
    const searches = sys.sandbox.answeredSearches();
    const changed = sys.recordIds.filter((id) => (sys.crm.record(id)?.syncedAt ?? null) !== null).length;
    const batchSize = sys.salesforce ? 200 : 100;
    const rate = base.reportsPerSecond;

    resetUpstreamCounts(sys);
    const secondStarted = Date.now();
    const secondCli = firstSyncOnly ? { code: 0 } : await cli(sys, ['sync', '--full', '--wait']);
    if (!firstSyncOnly) await settle(sys, secondStarted, timeoutMs);
    const second = {
      ...upstreamCounts(sys),
      seconds: (Date.now() - secondStarted) / 1000,
      cliExit: secondCli.code,
    };

    return {
      setting,
      companies: base.companies,
      batchSize,
      runs: runs.map((r) => ({
        kind: r.kind,
        state: r.state,
        listed: r.recordsListed,
        written: r.totals.written,
        stoppedReason: r.stoppedReason,
      })),
      listingPasses: runs.reduce((a, r) => a + r.recordsListed, 0) / base.companies,
      readsPerNeededSlug: first.reads / Math.max(1, first.distinctReads),
      slugsReadTwice: [...answered.values()].filter((n) => n === 2).length,
      slugsReadThrice: [...answered.values()].filter((n) => n >= 3).length,
      queriesSearchedTwice: [...searches.values()].filter((n) => n >= 2).length,
      first,
      recordsChanged: changed,
      writeCallsPerFullBatch:
        (first.writeSizes.length + first.bulkJobs) / Math.max(1, Math.ceil(changed / batchSize)),
      firstWriteSeconds: firstWriteMs === null ? null : firstWriteMs / 1000,
      firstSyncSeconds: (settledAt - day.startedAt) / 1000,
      boundSeconds: (first.distinctSearches + first.distinctReads) / rate,
      cliExit: cliSync.code,
      cliSeconds: (cliSync.endedAt - day.startedAt) / 1000,
      learntPerMinute: learnt?.perMinute ?? null,
      second,
    };
  } finally {
    if (system) {
      await system.close();
      if (!cluster) await deleteKeysWithPrefix(system.ctx.config.redisUrl, system.ctx.config.redisPrefix);
    }
    await cluster?.stop();
  }
}

export function upstreamCounts(system: LocalSystem): UpstreamCounts {
  const reads = system.sandbox.answeredReads();
  const searches = system.sandbox.answeredSearches();
  const answers = system.sandbox.answerCounts();
  return {
    writeSizes: writeCallSizes(system),
    bulkJobs: bulkJobs(system),
    searches: sum([...searches.values()]),
    distinctSearches: searches.size,
    reads: sum([...reads.values()]),
    distinctReads: reads.size,
    reportCalls: system.sandbox.requestCount(),
    reportLimited: answers.byStatus['429'] ?? 0,
  };
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}
