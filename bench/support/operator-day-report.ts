import type { BackfillEventsFigures } from './operator-day-backfill-events.js';
import type { LatencySummary, LinkedLatencySummary } from './operator-day-events.js';
import type { FaultFigures } from './operator-day-faults.js';
import type { NormalFigures, Setting } from './operator-day-normal.js';
import { sizesText } from './throttled-backfill.js';

/** The operator day's tables (issue 30), one column per setting, the target last. */

const LABEL: Record<Setting, string> = {
  hubspot: 'HubSpot',
  salesforce: 'Salesforce',
  cluster: 'HubSpot on a 3-master Redis Cluster',
};

export function normalTable(figures: NormalFigures[]): string {
  const rows: Row<NormalFigures>[] = [
    [
      'listing passes in the first sync',
      (f) =>
        `${f.listingPasses.toFixed(2)} (${f.runs.length} runs: ${f.runs.map((r) => `${r.kind} ${r.state}${r.stoppedReason ? ` [${r.stoppedReason}]` : ''}`).join(', ')})`,
      'one',
    ],
    [
      'report reads (200/404 answers) per needed slug',
      (f) =>
        `${f.readsPerNeededSlug.toFixed(2)} (${f.first.reads} reads for ${f.first.distinctReads} slugs; ` +
        `${f.slugsReadTwice} read twice, ${f.slugsReadThrice} three times or more)`,
      'at most 1.05',
    ],
    [
      'searches (200 answers)',
      (f) =>
        `${f.first.searches} for ${f.first.distinctSearches} queries (${(f.first.searches / Math.max(1, f.first.distinctSearches)).toFixed(2)}; ${f.queriesSearchedTwice} searched twice or more)`,
      'one per query',
    ],
    [
      'CRM record-write calls per full batch',
      (f) =>
        `${f.writeCallsPerFullBatch.toFixed(2)}: ${f.first.writeSizes.length} calls${f.first.bulkJobs > 0 ? ` + ${f.first.bulkJobs} bulk jobs` : ''} ` +
        `(${sizesText(f.first.writeSizes) || 'none'}) for ${f.recordsChanged} changed records, batch ${f.batchSize}`,
      'at most 1.1 (6 HubSpot / 4 Salesforce calls)',
    ],
    [
      "first sync's wall time against its distinct searches and reads at the key's rate",
      (f) =>
        `${f.firstSyncSeconds.toFixed(1)} s vs ${f.boundSeconds.toFixed(1)} s (${(f.firstSyncSeconds / f.boundSeconds).toFixed(1)}×)`,
      'at most 1.5×',
    ],
    ['time to first CRM write', (f) => secs(f.firstWriteSeconds), 'within 30 s'],
    [
      'report-service calls answered 429 (first sync)',
      (f) => `${f.first.reportLimited} of ${f.first.reportCalls}`,
      '',
    ],
    [
      "the key's rate as learnt at the first sync's end, per minute",
      (f) => (f.learntPerMinute === null ? '-' : f.learntPerMinute.toFixed(0)),
      '',
    ],
    [
      '`sync --wait` (typed a few seconds after the install)',
      (f) => `exit ${f.cliExit} after ${f.cliSeconds.toFixed(1)} s`,
      'exit 0',
    ],
    [
      'second sync (`sync --full --wait`) with nothing changed',
      (f) =>
        `${sum(f.second.writeSizes)} records in ${f.second.writeSizes.length + f.second.bulkJobs} write calls, ` +
        `${f.second.searches} searches, ${f.second.reads} reads, ${f.second.reportCalls} report requests; ${f.second.seconds.toFixed(1)} s, exit ${f.second.cliExit}`,
      '0 writes, 0 searches, 0 reads',
    ],
  ];
  const raw = figures.map(
    (f) => `- ${LABEL[f.setting]}: write call sizes in order: ${f.first.writeSizes.join(', ') || 'none'}`,
  );
  return [table(figures, rows), '', ...raw].join('\n');
}

export function faultTable(figures: FaultFigures[]): string {
  const rows: Row<FaultFigures>[] = [
    [
      'faults',
      (f) =>
        `${f.workerKills} worker SIGKILLs, Redis SIGKILL+restart at ${f.redisRestartAtS.toFixed(0)} s (${f.redisOutageMs} ms, serving again after ${(f.redisDownMs / 1000).toFixed(1)} s), faults for ${f.faultSeconds.toFixed(0)} s`,
      '',
    ],
    ['time to first CRM write', (f) => secs(f.firstWriteSeconds), 'within 30 s'],
    [
      'backfill',
      (f) =>
        f.backfillSeconds === null
          ? `not ended in ${f.timeoutSeconds} s (${f.runsText})`
          : `ended after ${f.backfillSeconds.toFixed(1)} s (${f.runsText})`,
      '',
    ],
    [
      'score.changed events sent, acknowledged, lost',
      (f) => `${f.events.sent} sent, ${f.events.acknowledged} acknowledged, ${f.events.lost} lost`,
      '0 lost',
    ],
    [
      'event-to-CRM during the faults, on the records linked when sent: p50 / p95',
      (f) => linkedText(f.latency.duringFaults.linked),
      '',
    ],
    [
      'event-to-CRM during the faults, strict (every record the seed links, incl. those the backfill had not reached)',
      (f) => latencyText(f.latency.duringFaults.strict),
      '',
    ],
    [
      'event-to-CRM after the faults while the backfill runs, on the records linked when sent: p50 / p95',
      (f) => linkedText(f.latency.afterFaultsDuringBackfill.linked),
      'every one within 10 s, p95 under 3 s',
    ],
    [
      'event-to-CRM after the faults while the backfill runs, strict (incl. records the backfill had not reached)',
      (f) => latencyText(f.latency.afterFaultsDuringBackfill.strict),
      '',
    ],
    [
      'event-to-CRM after the backfill, on the records linked when sent: p50 / p95',
      (f) => linkedText(f.latency.afterBackfill.linked),
      'p95 under 3 s',
    ],
    ['event-to-CRM after the backfill, strict', (f) => latencyText(f.latency.afterBackfill.strict), ''],
    [
      'report-service calls (answered 429, 503)',
      (f) =>
        `${f.reportCalls} (${f.reportLimited}, ${f.reportFailed}) in ${f.reportSpanSeconds.toFixed(0)} s`,
      '',
    ],
  ];
  return table(figures, rows);
}

/** One row per liveness run: the three bounds, pass or fail, and what the workers' logs showed. */
export function livenessTable(figures: FaultFigures[], labels: string[]): string {
  const head =
    '| run | faults | longest stretch without a CRM write while records had no status (≤ 30 s) | longest without a new status | ' +
    'events sent / acknowledged / lost (0) | every record at its end state after the faults (≤ 60 s) | ' +
    'backfill | worker log: stalled-limit failures / timed-out commands / revivals / run stall warnings | ' +
    'worker start (median) / no worker running during the faults (total, longest, within the longest write gap of the faults) | pass |';
  const rows = figures.map((f, i) => {
    const l = f.liveness;
    const gapOk = l.longestWriteGapS <= 30;
    const lostOk = f.events.lost === 0;
    const endOk = l.endStateAfterFaultsS !== null && l.endStateAfterFaultsS <= 60;
    const end =
      l.endStateAfterFaultsS === null
        ? `never (${l.withoutStatusAtEnd} records without a status at the end)`
        : `${l.endStateAfterFaultsS.toFixed(1)} s`;
    return (
      `| ${labels[i] ?? f.setting} | ${f.workerKills} kills in ${f.faultSeconds.toFixed(0)} s, Redis ${l.redisFault} at ` +
      `${f.redisRestartAtS.toFixed(0)} s (serving after ${(f.redisDownMs / 1000).toFixed(1)} s) | ` +
      `${l.longestWriteGapS.toFixed(1)} s from ${l.longestWriteGapFromS.toFixed(0)} s (${l.writeCalls} write calls) | ` +
      `${l.longestStatusGapS.toFixed(1)} s from ${l.longestStatusGapFromS.toFixed(0)} s | ` +
      `${f.events.sent} / ${f.events.acknowledged} / ${f.events.lost} | ${end} | ` +
      `${f.backfillSeconds === null ? 'not ended' : `${f.backfillSeconds.toFixed(0)} s`} (${f.runsText}) | ` +
      `${l.logs.stalledLimit} / ${l.logs.timedOut} / ${l.logs.revived} / ${l.logs.runStall} | ` +
      `${l.workerStartMedianS.toFixed(1)} s / ${l.noWorkerSeconds.toFixed(0)} s, ${l.longestNoWorkerS.toFixed(1)} s, ${l.noWorkerInLongestWriteGapS.toFixed(1)} s | ` +
      `${gapOk && lostOk && endOk ? 'pass' : `FAIL (${[!gapOk && 'write gap', !lostOk && 'lost', !endOk && 'end state'].filter(Boolean).join(', ')})`} |`
    );
  });
  return [head, `|${'---|'.repeat(10)}`, ...rows].join('\n');
}

export function backfillEventsTable(figures: BackfillEventsFigures[]): string {
  const rows: Row<BackfillEventsFigures>[] = [
    [
      "first sync's backfill",
      (f) =>
        f.backfillSeconds === null
          ? `not ended (${f.runsText})`
          : `ended after ${f.backfillSeconds.toFixed(1)} s (${f.runsText})`,
      '',
    ],
    [
      'report-service calls (answered 429); CRM requests (write calls)',
      (f) =>
        `${f.reportCalls} (${f.reportLimited}) in ${f.reportSpanSeconds.toFixed(0)} s; ${f.crmCalls} (${f.crmWriteCalls})`,
      '',
    ],
    [
      'CRM load beside the backfill: listing calls through the deferrable connector',
      (f) => `${f.crmLoadCalls} (${f.crmLoadPerSecond.toFixed(1)} a second)`,
      '',
    ],
    [
      'score.changed events sent during the backfill, acknowledged, lost',
      (f) => `${f.events.sent} sent, ${f.events.acknowledged} acknowledged, ${f.events.lost} lost`,
      '0 lost',
    ],
    [
      'event-to-CRM during the backfill, on the records linked when sent: p50 / p95',
      (f) => linkedText(f.linked),
      'p95 under 3 s',
    ],
    [
      'event-to-CRM during the backfill, strict (incl. records the backfill had not reached)',
      (f) => latencyText(f.strict),
      '',
    ],
  ];
  return table(figures, rows);
}

type Row<F> = [label: string, cell: (f: F) => string, target: string];

function table<F extends { setting: Setting }>(figures: F[], rows: Row<F>[]): string {
  const header = `| measure | ${figures.map((f) => LABEL[f.setting]).join(' | ')} | target |`;
  const lines = rows.map(
    ([label, cell, target]) => `| ${label} | ${figures.map(cell).join(' | ')} | ${target} |`,
  );
  return [header, `|---|${figures.map(() => '---|').join('')}---|`, ...lines].join('\n');
}

function linkedText(l: LinkedLatencySummary): string {
  const none = `${l.noRecordLinked} with no record linked yet`;
  return l.acknowledged === 0 ? `no events on linked records; ${none}` : `${latencyText(l)}; ${none}`;
}

function latencyText(l: LatencySummary): string {
  if (l.acknowledged === 0) return 'no events';
  return (
    `${(l.p50Ms / 1000).toFixed(2)} s / ${(l.p95Ms / 1000).toFixed(2)} s, max ${(l.maxMs / 1000).toFixed(1)} s ` +
    `(${l.landed} of ${l.acknowledged} landed; ${l.within10s} within 10 s)`
  );
}

function secs(s: number | null): string {
  return s === null ? 'none' : `${s.toFixed(1)} s`;
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}
